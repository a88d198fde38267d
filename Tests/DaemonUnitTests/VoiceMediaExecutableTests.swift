@testable import InteractiveDaemon
import Testing

/// Where the daemon looks for its media process: next to itself, then in the package's libexec.
@Suite struct VoiceMediaExecutableTests {
    @Test func nextToTheDaemonThenInLibexec() {
        #expect(VoiceMediaExecutable.candidates(daemon: "/usr/sbin/interactived")
            == ["/usr/sbin/interactived-voice", "/usr/libexec/interactived/interactived-voice"])
        #expect(VoiceMediaExecutable.candidates(daemon: "/work/.build/debug/interactived")
            == ["/work/.build/debug/interactived-voice", "/work/.build/libexec/interactived/interactived-voice"])
    }
}
