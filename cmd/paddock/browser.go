package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

// browserFlags are paddock browser's options (each action uses some).
type browserFlags struct {
	tab, wait, output, button, timeout string
	markdown, fullPage, clear, submit  bool
	asJSON                             bool
	maxBytes, amount, count            int
}

const browserUsage = `browser ID ACTION [ARG...]

Actions:
  navigate URL               load a page and wait for it (--wait load|domcontentloaded|none)
  text                       the page's visible text (--markdown: its readable content as Markdown)
  snapshot                   the accessibility tree, with refs (e7) that actions accept as ref=e7
  screenshot -o FILE         a PNG of the viewport (--full-page: the whole page)
  click SELECTOR             click an element (--button, --count)
  type SELECTOR TEXT         type into a field (--clear replaces its content, --submit presses Enter)
  press KEY [SELECTOR]       press a key or a combination: Enter, Tab, Control+A...
  scroll [DIRECTION]         down (default), up, left or right (--amount PIXELS), or: scroll to SELECTOR
  eval EXPRESSION            evaluate JavaScript in the page, print the value as JSON
  tabs                       list the tabs; tabs open [URL], tabs switch TAB, tabs close TAB
  status | start | stop      the browser itself
  downloads                  files the browser downloaded (into /workspace/Downloads)
  cdp-url                    the DevTools URL for Playwright's connectOverCDP (with the key as a Bearer header)
  view-url [TOKEN]           the live view page (open it in a browser; TOKEN: a sandbox token)

SELECTOR is a CSS selector, text=Visible text, or ref=e7 from a snapshot.`

func newBrowserCmd(e *env) *cobra.Command {
	var f browserFlags
	cmd := &cobra.Command{
		Use:   browserUsage,
		Short: "Drive the headless browser inside a sandbox",
		Long: `Drive the sandbox's headless Chromium (started on first use). It runs inside
the sandbox: its traffic obeys the sandbox's network policy and its downloads
land in the sandbox's files. See docs/browser.md.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if f.timeout != "" {
				d, err := parseDuration(f.timeout)
				if err != nil {
					return fmt.Errorf("--timeout: %w", err)
				}
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d+5*time.Second)
				defer cancel()
			}
			return runBrowser(ctx, e, &f, args[0], args[1], args[2:])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.tab, "tab", "", "tab id or index (default: the current tab)")
	fs.StringVar(&f.wait, "wait", "", "navigate: load (default), domcontentloaded or none")
	fs.StringVarP(&f.output, "output", "o", "", "screenshot: the PNG file to write (- for stdout)")
	fs.BoolVar(&f.fullPage, "full-page", false, "screenshot: the whole page")
	fs.BoolVar(&f.markdown, "markdown", false, "text: the readable content as Markdown")
	fs.IntVar(&f.maxBytes, "max-bytes", 0, "text, snapshot: most bytes to return")
	fs.BoolVar(&f.clear, "clear", false, "type: replace the field's content")
	fs.BoolVar(&f.submit, "submit", false, "type: press Enter afterwards")
	fs.StringVar(&f.button, "button", "", "click: left (default), right or middle")
	fs.IntVar(&f.count, "count", 0, "click: 2 for a double click")
	fs.IntVar(&f.amount, "amount", 0, "scroll: pixels")
	fs.StringVar(&f.timeout, "timeout", "", "give up after this long, e.g. 10s (default: the server's)")
	fs.BoolVar(&f.asJSON, "json", false, "print the server's answer as JSON")
	return cmd
}

func runBrowser(ctx context.Context, e *env, f *browserFlags, id, action string, args []string) error {
	c := e.client()
	var timeoutMs int64
	if f.timeout != "" {
		d, _ := parseDuration(f.timeout)
		timeoutMs = d.Milliseconds()
	}
	nargs := func(min, max int) error {
		if len(args) < min || len(args) > max {
			return fmt.Errorf("%s: wrong number of arguments; usage:\n  paddock %s", action, browserUsage)
		}
		return nil
	}
	target := func(sel string) client.BrowserTarget { return client.BrowserTarget{Selector: sel} }
	switch action {
	case "navigate", "goto", "open":
		if err := nargs(1, 1); err != nil {
			return err
		}
		p, err := c.BrowserNavigate(ctx, id, client.NavigateRequest{URL: args[0], WaitUntil: f.wait, Tab: f.tab, TimeoutMs: timeoutMs})
		return printPage(e, f, p, err)
	case "click":
		if err := nargs(1, 1); err != nil {
			return err
		}
		p, err := c.BrowserClick(ctx, id, client.ClickRequest{Target: target(args[0]), Button: f.button, ClickCount: f.count, Tab: f.tab,
			TimeoutMs: timeoutMs})
		return printPage(e, f, p, err)
	case "type", "fill":
		if err := nargs(2, 2); err != nil {
			return err
		}
		p, err := c.BrowserType(ctx, id, client.TypeRequest{Target: target(args[0]), Text: args[1], Clear: f.clear, Submit: f.submit,
			Tab: f.tab, TimeoutMs: timeoutMs})
		return printPage(e, f, p, err)
	case "press":
		if err := nargs(1, 2); err != nil {
			return err
		}
		req := client.PressRequest{Key: args[0], Tab: f.tab, TimeoutMs: timeoutMs}
		if len(args) == 2 {
			req.Target = target(args[1])
		}
		p, err := c.BrowserPress(ctx, id, req)
		return printPage(e, f, p, err)
	case "scroll":
		if err := nargs(0, 2); err != nil {
			return err
		}
		req := client.ScrollRequest{Amount: f.amount, Tab: f.tab, TimeoutMs: timeoutMs}
		switch {
		case len(args) == 2 && args[0] == "to":
			req.Target = target(args[1])
		case len(args) == 1:
			req.Direction = args[0]
		case len(args) == 2:
			return fmt.Errorf("scroll: use `scroll DIRECTION` or `scroll to SELECTOR`")
		}
		res, err := c.BrowserScroll(ctx, id, req)
		return emit(e, f.asJSON, res, err, func(res client.ScrollResult) error {
			end := ""
			if res.AtEnd {
				end = " (the end)"
			}
			fmt.Fprintf(e.stdout, "scrolled to %.0f,%.0f of %.0f,%.0f%s\n", res.X, res.Y, res.MaxX, res.MaxY, end)
			return nil
		})
	case "text":
		if err := nargs(0, 0); err != nil {
			return err
		}
		req := client.TextRequest{MaxBytes: f.maxBytes, Tab: f.tab}
		if f.markdown {
			req.Format = "markdown"
		}
		res, err := c.BrowserText(ctx, id, req)
		return emit(e, f.asJSON, res, err, func(res client.TextResult) error {
			fmt.Fprint(e.stdout, res.Text)
			if !strings.HasSuffix(res.Text, "\n") {
				fmt.Fprintln(e.stdout)
			}
			if res.Truncated {
				fmt.Fprintf(e.stderr, "paddock: the text was cut at %d bytes (of %d); raise --max-bytes\n", len(res.Text), res.Bytes)
			}
			return nil
		})
	case "snapshot":
		if err := nargs(0, 0); err != nil {
			return err
		}
		res, err := c.BrowserSnapshot(ctx, id, client.SnapshotRequest{MaxBytes: f.maxBytes, Tab: f.tab})
		return emit(e, f.asJSON, res, err, func(res client.SnapshotResult) error {
			fmt.Fprint(e.stdout, res.Snapshot)
			return nil
		})
	case "screenshot":
		if err := nargs(0, 0); err != nil {
			return err
		}
		if f.output == "" {
			return errors.New("screenshot: give the file to write with -o FILE (or -o - for stdout)")
		}
		shot, err := c.BrowserScreenshot(ctx, id, client.ScreenshotRequest{FullPage: f.fullPage, Tab: f.tab})
		if err != nil {
			return err
		}
		if f.output == "-" {
			_, err := e.stdout.Write(shot.PNG)
			return err
		}
		if err := os.WriteFile(f.output, shot.PNG, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "wrote %s (%dx%d, %d bytes)\n", f.output, shot.Width, shot.Height, len(shot.PNG))
		return nil
	case "eval":
		if err := nargs(1, 1); err != nil {
			return err
		}
		res, err := c.BrowserEval(ctx, id, client.EvalRequest{Expression: args[0], Tab: f.tab, TimeoutMs: timeoutMs})
		return emit(e, f.asJSON, res, err, func(res client.EvalResult) error {
			var v any
			if json.Unmarshal(res.Value, &v) == nil {
				return printJSON(e.stdout, v)
			}
			fmt.Fprintln(e.stdout, string(res.Value))
			return nil
		})
	case "tabs":
		return browserTabs(ctx, e, f, c, id, args)
	case "status", "start", "stop":
		if err := nargs(0, 0); err != nil {
			return err
		}
		var st client.BrowserStatus
		var err error
		switch action {
		case "status":
			st, err = c.BrowserStatus(ctx, id)
		case "start":
			st, err = c.BrowserStart(ctx, id)
		default:
			st, err = c.BrowserStop(ctx, id)
		}
		return emit(e, f.asJSON, st, err, func(st client.BrowserStatus) error {
			fmt.Fprintf(e.stdout, "state: %s\n", st.State)
			if st.Pid != 0 {
				fmt.Fprintf(e.stdout, "pid: %d (up %s)\n", st.Pid, time.Since(st.StartedAt).Round(time.Second))
			}
			if st.Restarts > 0 || st.LastExit != "" {
				fmt.Fprintf(e.stdout, "restarts: %d (last exit: %s)\n", st.Restarts, st.LastExit)
			}
			if st.Error != "" {
				fmt.Fprintf(e.stdout, "error: %s\n", st.Error)
			}
			for _, t := range st.Tabs {
				fmt.Fprintf(e.stdout, "tab %s %s\n", t.ID, t.URL)
			}
			return nil
		})
	case "downloads":
		res, err := c.BrowserDownloads(ctx, id)
		return emit(e, f.asJSON, res, err, func(res client.BrowserDownloads) error {
			rows := [][]string{}
			for _, d := range res.Downloads {
				rows = append(rows, []string{d.State, d.Path, d.URL})
			}
			table(e.stdout, []string{"STATE", "PATH", "URL"}, rows)
			return nil
		})
	case "cdp-url":
		fmt.Fprintln(e.stdout, c.BrowserCDPURL(id))
		return nil
	case "view-url":
		if err := nargs(0, 1); err != nil {
			return err
		}
		tok := ""
		if len(args) == 1 {
			tok = args[0]
		}
		fmt.Fprintln(e.stdout, c.BrowserViewURL(id, tok))
		return nil
	}
	return fmt.Errorf("unknown browser action %q; usage:\n  paddock %s", action, browserUsage)
}

func browserTabs(ctx context.Context, e *env, f *browserFlags, c *client.Client, id string, args []string) error {
	sub := "list"
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	var err error
	var tabs client.BrowserTabs
	switch {
	case sub == "list" && len(args) == 0:
		tabs, err = c.BrowserTabs(ctx, id)
	case sub == "open" && len(args) <= 1:
		req := client.OpenTabRequest{}
		if len(args) == 1 {
			req.URL = args[0]
		}
		var t client.BrowserTab
		if t, err = c.BrowserOpenTab(ctx, id, req); err == nil {
			tabs.Tabs = []client.BrowserTab{t}
		}
	case sub == "switch" && len(args) == 1:
		var t client.BrowserTab
		if t, err = c.BrowserSwitchTab(ctx, id, args[0]); err == nil {
			tabs.Tabs = []client.BrowserTab{t}
		}
	case sub == "close" && len(args) == 1:
		tabs, err = c.BrowserCloseTab(ctx, id, args[0])
	default:
		return errors.New("usage: paddock browser ID tabs [open [URL] | switch TAB | close TAB]")
	}
	return emit(e, f.asJSON, tabs, err, func(tabs client.BrowserTabs) error {
		rows := [][]string{}
		for i, t := range tabs.Tabs {
			cur := ""
			if t.Current {
				cur = "*"
			}
			rows = append(rows, []string{fmt.Sprint(i), cur, t.ID, t.URL, t.Title})
		}
		table(e.stdout, []string{"#", "", "ID", "URL", "TITLE"}, rows)
		return nil
	})
}

func printPage(e *env, f *browserFlags, p client.BrowserPage, err error) error {
	return emit(e, f.asJSON, p, err, func(p client.BrowserPage) error {
		status := ""
		if p.Status != 0 {
			status = fmt.Sprintf(" [%d]", p.Status)
		}
		fmt.Fprintf(e.stdout, "%s%s %s\n", p.URL, status, p.Title)
		for _, d := range p.Downloads {
			fmt.Fprintf(e.stdout, "download: %s (%s)\n", d.Filename, d.State)
		}
		for _, t := range p.NewTabs {
			fmt.Fprintf(e.stdout, "new tab: %s %s\n", t.ID, t.URL)
		}
		return nil
	})
}
