package browser

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// Options configure a Service. Zero fields take the defaults.
type Options struct {
	Log *slog.Logger
	// Chromium is the browser binary inside the sandbox (the sandbox's
	// /usr is the host's, read-only): Debian's chromium package.
	Chromium string
	// User runs the browser: "user" (uid 1000, default) or "root" (both
	// need --no-sandbox: Chromium's own sandbox needs user namespaces,
	// which the sandbox refuses; the sandbox surrounds it instead).
	User string
	// ProfileDir is the browser's profile (cookies, cache, DevToolsActivePort).
	ProfileDir string
	// DownloadDir is where downloads land.
	DownloadDir string
	// Width and Height are the window (and viewport) size in CSS pixels.
	Width, Height int
	// ActionTimeout bounds an action, waiting for its element included,
	// unless the request sets its own (default 15 s).
	ActionTimeout time.Duration
	// NavigateTimeout bounds a navigation (default 30 s).
	NavigateTimeout time.Duration
	// StartTimeout bounds a browser start (default 30 s).
	StartTimeout time.Duration
	// MaxTimeout is the largest timeout a request may ask for (default 5 min).
	MaxTimeout time.Duration
	// ExtraArgs are added to the browser's command line.
	ExtraArgs []string
	// MaxSessions bounds the DevTools sessions the server holds at once
	// (default 256); the least recently used is closed beyond it (its
	// browser keeps running).
	MaxSessions int
	// IdleTimeout closes a session unused for that long (default 10 min).
	IdleTimeout time.Duration
	// MaxCDP bounds the CDP connections clients open per sandbox
	// (default 16); MaxViewers the live views per sandbox (default 4).
	MaxCDP, MaxViewers int
	// What a sandbox's browser may make the server hold (cdplimits.go):
	// MaxCDPMessage bounds one DevTools message (default 8 MiB),
	// MaxCDPCapture a screenshot's reply (default 96 MiB), MaxCDPEventRate
	// the event bytes per second on one connection (default 32 MiB/s,
	// bursts of twice that; negative: none) and CDPBudget the bytes being
	// read from all browsers at once (default 256 MiB; negative: none).
	MaxCDPMessage, MaxCDPCapture int
	MaxCDPEventRate              int
	CDPBudget                    int64
}

// Defaults.
const (
	DefaultChromium    = "/usr/lib/chromium/chromium"
	DefaultProfileDir  = "/home/user/.paddock-browser"
	DefaultDownloadDir = "/workspace/Downloads"
	DefaultWidth       = 1280
	DefaultHeight      = 800
	// MinShmBytes: below this /dev/shm Chromium keeps its shared memory
	// in /tmp instead (--disable-dev-shm-usage); it crashes when
	// /dev/shm fills up.
	MinShmBytes = 256 << 20
)

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Chromium == "" {
		o.Chromium = DefaultChromium
	}
	if o.User == "" {
		o.User = wire.UserUser
	}
	if o.ProfileDir == "" {
		o.ProfileDir = DefaultProfileDir
	}
	if o.DownloadDir == "" {
		o.DownloadDir = DefaultDownloadDir
	}
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = DefaultWidth, DefaultHeight
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 15 * time.Second
	}
	if o.NavigateTimeout <= 0 {
		o.NavigateTimeout = 30 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = 5 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 256
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.MaxCDP <= 0 {
		o.MaxCDP = 16
	}
	if o.MaxCDPMessage <= 0 {
		o.MaxCDPMessage = DefaultMaxCDPMessage
	}
	if o.MaxCDPCapture <= 0 {
		o.MaxCDPCapture = DefaultMaxCDPCapture
	}
	if o.MaxCDPEventRate == 0 {
		o.MaxCDPEventRate = DefaultMaxCDPEventRate
	}
	if o.CDPBudget == 0 {
		o.CDPBudget = DefaultCDPBudget
	}
	if o.MaxViewers <= 0 {
		o.MaxViewers = 4
	}
	return o
}

// ChromiumArgs is the browser's command line (without the binary).
//
// Headless, with Chromium's own sandbox off: it needs user namespaces
// (or a setuid helper), which the sandbox's seccomp filter refuses, and
// the sandbox's namespaces, seccomp, Landlock and cgroups surround the
// whole browser instead. DevTools listen on the sandbox's loopback on a
// port Chromium picks (written to DevToolsActivePort), so no fixed port
// collides with a workload. Everything that phones home is off: a sandbox
// policy would refuse it anyway, and refused connections are audit
// noise. No proxy: the sandbox's egress is transparent, so the policy
// applies however the proxy variables change while the browser runs.
func ChromiumArgs(o Options) []string {
	o = o.withDefaults()
	args := []string{
		"--headless",
		"--no-sandbox",
		"--disable-gpu",
		"--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0",
		"--user-data-dir=" + o.ProfileDir,
		"--window-size=" + strconv.Itoa(o.Width) + "," + strconv.Itoa(o.Height),
		"--no-first-run",
		"--no-default-browser-check",
		"--no-proxy-server",
		"--disable-quic", // UDP is not proxied; falling back to TCP costs a timeout
		// Background networking (the flags Playwright and Puppeteer use).
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-domain-reliability",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-extensions",
		"--disable-breakpad",
		"--disable-crash-reporter",
		"--disable-client-side-phishing-detection",
		"--metrics-recording-only",
		"--no-pings",
		"--safebrowsing-disable-auto-update",
		"--password-store=basic",
		"--use-mock-keychain",
		"--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication," +
			"CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,DnsOverHttps,PrivacySandboxSettings4",
		// A page in the background keeps working (agents switch tabs).
		"--disable-background-timer-throttling",
		"--disable-backgrounding-occluded-windows",
		"--disable-renderer-backgrounding",
		"--disable-hang-monitor",
		"--disable-prompt-on-repost",
		"--disable-ipc-flooding-protection",
		"--force-color-profile=srgb",
		"--hide-scrollbars",
		"--mute-audio",
	}
	args = append(args, o.ExtraArgs...)
	return append(args, "about:blank")
}

// preferences are the profile's first preferences: downloads go to the
// download directory without asking, and Safe Browsing (which would check
// every download with Google) is off.
func preferences(o Options) string {
	p := map[string]any{
		"download": map[string]any{"default_directory": o.DownloadDir, "prompt_for_download": false,
			"directory_upgrade": true},
		"savefile":     map[string]any{"default_directory": o.DownloadDir},
		"safebrowsing": map[string]any{"enabled": false},
		"profile": map[string]any{"default_content_setting_values": map[string]any{"automatic_downloads": 1},
			"password_manager_enabled": false},
		"credentials_enable_service": false,
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// launch is how the sandbox's guest is asked to run the browser.
func launch(o Options) sandbox.BrowserLaunch {
	o = o.withDefaults()
	return sandbox.BrowserLaunch{
		Path: o.Chromium, Args: ChromiumArgs(o), User: o.User,
		ProfileDir: o.ProfileDir, DownloadDir: o.DownloadDir, Preferences: preferences(o),
		SmallShmArg: "--disable-dev-shm-usage", ShmMinBytes: MinShmBytes,
		Timeout: o.StartTimeout,
	}
}
