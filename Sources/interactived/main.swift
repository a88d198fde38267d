import Glibc
import InteractiveDaemon

let status = await Daemon.main(arguments: Array(CommandLine.arguments.dropFirst()),
                               environment: LocalFiles.environment())
exit(status.rawValue)
