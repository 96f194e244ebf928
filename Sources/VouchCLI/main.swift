import Foundation

/// `vouch`: verify App Store signed data offline.
// A closed pipe must be an EPIPE write error (exit 74, one line), not a death by signal.
signal(SIGPIPE, SIG_IGN)
let status = CommandRegistry.vouch.run(Array(CommandLine.arguments.dropFirst()), console: .standard)
// Every byte went out through write(2) already, so the process leaves with _exit: no atexit
// handler runs, and no leak check counts the per-thread state of worker threads still winding
// down as lost. The library's leak checks run in-process, in the test suites.
_exit(status)
