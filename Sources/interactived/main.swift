import FoundationEssentials
import Glibc
import InteractiveDaemon

let status = await Daemon.main(arguments: Array(CommandLine.arguments.dropFirst()),
                               environment: ProcessInfo.processInfo.environment)
exit(status.rawValue)
