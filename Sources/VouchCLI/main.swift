import Foundation

/// `vouch`: verify App Store signed data offline.
// A closed pipe must be an EPIPE write error (exit 74, one line), not a death by signal.
signal(SIGPIPE, SIG_IGN)
exit(CommandRegistry.vouch.run(Array(CommandLine.arguments.dropFirst()), console: .standard))
