"""The commands that run without the console: headless runs, batches, watching, the inbox,
decisions and the browser server."""
