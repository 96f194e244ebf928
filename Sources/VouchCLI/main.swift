import Foundation

/// `vouch`: verify App Store signed data offline.
// A closed pipe is reported as a write error (exit 74), not a silent death.
signal(SIGPIPE, SIG_IGN)
let arguments = Array(CommandLine.arguments.dropFirst())
exit(CLI.run(arguments))
