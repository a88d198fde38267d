import CGStreamer
import CInteractiveShims
import Runtime
import VoiceMediaProtocol
#if canImport(Glibc)
import Glibc
#endif

// interactived-voice --control-fd N: the media process of one voice-room join (docs/voice.md).

guard let arguments = ProcessArguments(Array(CommandLine.arguments.dropFirst())) else {
    Log.line(ProcessArguments.usage)
    exit(64)  // EX_USAGE
}
signal(SIGPIPE, SIG_IGN)
guard EventLoop.shared.isRunning else {
    Log.line("cannot start the event loop")
    exit(1)
}

let control: ControlChannel
do {
    control = try await ControlChannel.open(fd: arguments.controlFD)
} catch {
    Log.line("cannot use the control socket: \(error)")
    exit(1)
}

var initError: UnsafeMutablePointer<GError>?
guard gst_init_check(nil, nil, &initError) != 0 else {
    let reason = "GStreamer cannot start: \(initError?.pointee.message.map { String(cString: $0) } ?? "unknown error")"
    _ = await control.send(.unavailable(reason: reason))
    Log.line(reason)
    exit(MediaSession.ExitStatus.unavailable.rawValue)
}

let mailbox = Mailbox<MediaSession.Input>()
let terminations = [SIGTERM, SIGINT]
let signalFD = terminations.withUnsafeBufferPointer { interactive_signal_pipe($0.baseAddress, Int32($0.count)) }
guard signalFD >= 0, let signals = try? await WatchedDescriptor.watch(signalFD) else {
    Log.line("cannot watch SIGTERM")
    exit(1)
}

let process = MediaProcess(control: control, mailbox: mailbox)
let status = await withTaskGroup(of: Void.self, returning: MediaSession.ExitStatus.self) { group in
    group.addTask { await control.receive(into: mailbox) }
    group.addTask {
        // A byte in the pipe is a signal: SIGTERM and SIGINT both end the join.
        var byte: UInt8 = 0
        while !Task.isCancelled {
            if read(signals.fd, &byte, 1) == 1 {
                mailbox.send(.terminated)
                return
            }
            do { try await signals.readable() } catch { return }
        }
    }
    let status = await process.run()
    group.cancelAll()
    return status
}
await signals.stopWatching()
gst_deinit()
exit(status.rawValue)
