package browser

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Tabs and downloads.

// Tabs lists the browser's tabs.
func (s *Service) Tabs(ctx context.Context, sc sandbox.Scope, id string) (wire.Tabs, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.Tabs{}, err
	}
	sess, err := s.session(ctx, sc, id, rights.Read)
	if err != nil {
		return wire.Tabs{}, err
	}
	tabs, err := sess.tabList(ctx)
	if err != nil {
		return wire.Tabs{}, s.explain(ctx, sess, "listing the tabs", attachTimeout, err)
	}
	if cur := sess.currentTab(); cur == "" && len(tabs) > 0 {
		sess.setCurrent(target.ID(tabs[0].ID))
		tabs[0].Current = true
	}
	return wire.Tabs{Tabs: nonNil(tabs)}, nil
}

// OpenTab opens a tab, makes it current and loads req.URL in it.
func (s *Service) OpenTab(ctx context.Context, sc sandbox.Scope, id string, req wire.OpenTabRequest) (wire.Tab, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Tab{}, err
	}
	if req.URL != "" {
		if _, err := checkURL(req.URL); err != nil {
			return wire.Tab{}, err
		}
	}
	var tid target.ID
	err := s.audited(ctx, sc, id, rights.Exec, "tab_open", map[string]any{"url": clipText(req.URL, 2048)}, func() error {
		sess, err := s.session(ctx, sc, id, rights.Exec)
		if err != nil {
			return err
		}
		unlock, err := sess.lock(ctx)
		if err != nil {
			return err
		}
		tid, err = sess.newPage(ctx, "about:blank")
		unlock()
		if err != nil {
			return s.explain(ctx, sess, "opening a tab", attachTimeout, err)
		}
		return nil
	})
	if err != nil {
		return wire.Tab{}, err
	}
	if req.URL != "" {
		p, err := s.Navigate(ctx, sc, id, wire.NavigateRequest{URL: req.URL, Tab: string(tid), TimeoutMs: req.TimeoutMs})
		if err != nil {
			return wire.Tab{ID: string(tid), URL: "about:blank", Current: true}, err
		}
		return wire.Tab{ID: p.Tab, URL: p.URL, Title: p.Title, Current: true}, nil
	}
	return wire.Tab{ID: string(tid), URL: "about:blank", Current: true}, nil
}

// SwitchTab makes a tab the current one (and brings it to the front).
func (s *Service) SwitchTab(ctx context.Context, sc sandbox.Scope, id, ref string) (wire.Tab, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Tab{}, err
	}
	var out wire.Tab
	err := s.audited(ctx, sc, id, rights.Exec, "tab_switch", map[string]any{"tab": ref}, func() error {
		return s.runOn(ctx, sc, id, rights.Exec, ref, "switching tabs", attachTimeout, true, func(a *act) error {
			a.sess.setCurrent(a.tab.id)
			_, _ = cdp.Call(a.ctx, chromedp.FromContext(a.sess.ctx).Browser, target.ActivateTarget,
				target.ActivateTargetParams{TargetID: a.tab.id})
			p := a.page()
			out = wire.Tab{ID: p.Tab, URL: p.URL, Title: p.Title, Current: true}
			return nil
		})
	})
	return out, err
}

// CloseTab closes a tab and returns the ones left.
func (s *Service) CloseTab(ctx context.Context, sc sandbox.Scope, id, ref string) (wire.Tabs, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return wire.Tabs{}, err
	}
	if ref == "" {
		return wire.Tabs{}, errs.Invalid("name the tab to close (its id or index)")
	}
	err := s.audited(ctx, sc, id, rights.Exec, "tab_close", map[string]any{"tab": ref}, func() error {
		sess, err := s.session(ctx, sc, id, rights.Exec)
		if err != nil {
			return err
		}
		unlock, err := sess.lock(ctx)
		if err != nil {
			return err
		}
		defer unlock()
		tid, err := sess.resolveTab(ctx, ref)
		if err != nil {
			return s.explain(ctx, sess, "closing the tab", attachTimeout, err)
		}
		sess.forget(tid)
		cctx, cancel := context.WithTimeout(sess.ctx, attachTimeout)
		defer cancel()
		if _, err := cdp.Call(cctx, chromedp.FromContext(sess.ctx).Browser, target.CloseTarget,
			target.CloseTargetParams{TargetID: tid}); err != nil {
			return s.explain(ctx, sess, "closing the tab", attachTimeout, err)
		}
		// Chromium answers before the tab is gone from the list.
		for i := 0; i < 50; i++ {
			infos, err := sess.pages(ctx)
			if err != nil {
				break
			}
			gone := true
			for _, in := range infos {
				gone = gone && in.TargetID != tid
			}
			if gone {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	})
	if err != nil {
		return wire.Tabs{}, err
	}
	return s.Tabs(ctx, sc, id)
}

// Downloads lists the downloads the server saw in this browser session.
func (s *Service) Downloads(ctx context.Context, sc sandbox.Scope, id string) (wire.Downloads, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.Downloads{}, err
	}
	sess, err := s.session(ctx, sc, id, rights.Read)
	if err != nil {
		return wire.Downloads{}, err
	}
	return wire.Downloads{Dir: s.o.DownloadDir, Downloads: nonNil(sess.downloadsSince(0))}, nil
}

// pageIDs are the tabs open now (to tell which ones an action opens).
func (a *act) pageIDs() map[target.ID]bool {
	infos, err := a.sess.pages(a.ctx)
	if err != nil {
		return nil
	}
	out := map[target.ID]bool{}
	for _, in := range infos {
		out[in.TargetID] = true
	}
	return out
}

func (a *act) newTabs(before map[target.ID]bool) []wire.Tab {
	if before == nil {
		return nil
	}
	infos, err := a.sess.pages(context.WithoutCancel(a.ctx))
	if err != nil {
		return nil
	}
	var out []wire.Tab
	for _, in := range infos {
		if !before[in.TargetID] {
			out = append(out, wire.Tab{ID: string(in.TargetID), URL: clipText(in.URL, 2048), Title: clipText(in.Title, 512)})
		}
	}
	return out
}
