import Foundation

// Top-level code runs on the main actor: keep it to one call. Commands (and anything a C or
// Dispatch thread may call back into) live in Commands.swift, outside any actor.
exit(Commands.main(Array(CommandLine.arguments.dropFirst())))
