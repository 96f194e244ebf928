import Foundation

/// `vouch`: verify App Store signed data offline.
// A closed pipe must be an EPIPE write error (exit 74, one line), not a death by signal.
signal(SIGPIPE, SIG_IGN)
let status = CommandRegistry.vouch.run(Array(CommandLine.arguments.dropFirst()), console: .standard)
// Every byte went out through write(2) already, so the process leaves with _exit: no atexit
// handler runs. Under LeakSanitizer, exit's leak check now and then reported OpenSSL's
// per-thread state of worker threads still alive at that moment as lost (about 6.7 KB, in
// batch runs, on a loaded machine); the library's own leak checks run in-process, in the
// test suites, where nothing is reported.
_exit(status)
