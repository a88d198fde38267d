import Foundation
#if canImport(Glibc)
import Glibc
#endif

// ipc-bench: the benchmarks of interactived's local API. See Benchmarks/README.md.

let usage = """
    Usage: ipc-bench COMMAND [--option value …]
      events              events/s from EventBus.publish to N socket subscribers (in-process IPC server)
                          --dir DIR [--subscribers 1,10,100] [--events N] [--seconds S] [--modes window,flood]
                          [--window 512] [--target 100000]
      store-cost          the store writes of one tracked overlay: [--dirs DIR,DIR] [--count 2000]
      raw-events          the same lines over plain socketpairs (baseline) [--subscribers …] [--events N] [--seconds S]
      rpc                 requests/s of one method: --targets daemon=PATH,baseline=PATH [--connections N]
                          [--depth D] [--seconds S] [--rounds 3] [--warmup S] [--method daemon.status]; or --probe PATH
      fixed-reply-server  baseline peer for rpc: --socket PATH [--reply-bytes N] [--max-seconds S]
      ready               exec → READY=1 and idle RSS: --daemon PATH --dir DIR [--runs 25] [--idle-seconds 2]
      subscribe           end-to-end subscriber: --socket PATH [--scan 1] (commands on stdin: report TAG, expect TAG N, quit)
    """

func runCommand() async -> Int32 {
    let arguments = CommandLine.arguments.dropFirst()
    guard let command = arguments.first else {
        print(usage)
        return 64
    }
    do {
        let options = try Options(arguments.dropFirst())
        switch command {
        case "events", "store-cost":
            #if DEBUG || IPC_BENCH_TESTABLE
            if command == "events" { try await EventsBench.run(options) } else { try await StoreCost.run(options) }
            #else
            FileHandle.standardError.write(Data("""
                ipc-bench \(command) needs the daemon's internals: build with
                  swift build --package-path Benchmarks -c release -Xswiftc -static-stdlib -Xswiftc -enable-testing -Xswiftc -DIPC_BENCH_TESTABLE --product ipc-bench
                (Benchmarks/ipc.sh does).

                """.utf8))
            return 69
            #endif
        case "raw-events": try RawEventsBaseline.run(options)
        case "rpc": try RPCLoad.run(options)
        case "fixed-reply-server": try FixedReplyServer.run(options)
        case "ready": try ReadyBench.run(options)
        case "subscribe": try E2ESubscriber.run(options)
        case "-h", "--help", "help":
            print(usage)
        default:
            FileHandle.standardError.write(Data("ipc-bench: unknown command \(command)\n\(usage)\n".utf8))
            return 64
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("ipc-bench \(command): \(error)\n".utf8))
        return 1
    }
}

exit(await runCommand())
