// htmx settings for piweb. This runs before htmx initialises (both scripts
// are deferred, and htmx waits for DOMContentLoaded).
// - no inline <style> (the Content-Security-Policy allows only style files)
// - no eval and no <script> from responses
// - no history snapshots: a session page can hold thousands of rows
// - error responses carry a friendly fragment: swap it like any other
htmx.config.includeIndicatorStyles = false;
htmx.config.allowEval = false;
htmx.config.allowScriptTags = false;
htmx.config.historyCacheSize = 0;
htmx.config.refreshOnHistoryMiss = true;
htmx.config.selfRequestsOnly = true;
htmx.config.responseHandling = [
  { code: "204", swap: false },
  { code: "[23]..", swap: true },
  { code: "[45]..", swap: true, error: true },
];
