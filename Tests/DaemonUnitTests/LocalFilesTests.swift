import Glibc
@testable import InteractiveDaemon
import Testing

@Suite struct LocalFilesTests {
    /// A fresh folder under /tmp, removed by the caller's `defer`.
    private func scratchFolder() throws -> String {
        var template = Array("/tmp/localfiles-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        let path = try #require(made.map { String(cString: $0) })
        return path
    }

    private func write(_ text: String, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    private func remove(_ folder: String) {
        _ = system("rm -rf '\(folder)'")
    }

    @Test func readsAWholeFileLongerThanOneChunk() throws {
        let folder = try scratchFolder()
        defer { remove(folder) }
        let text = String(repeating: "0123456789abcdef", count: 3_000)  // 48,000 bytes: three reads
        write(text, to: folder + "/file")
        #expect(LocalFiles.contents(atPath: folder + "/file") == Array(text.utf8))
        write("", to: folder + "/empty")
        #expect(LocalFiles.contents(atPath: folder + "/empty") == [])
    }

    @Test func refusesWhatIsMissingAFolderOrTooLong() throws {
        let folder = try scratchFolder()
        defer { remove(folder) }
        #expect(LocalFiles.contents(atPath: folder + "/missing") == nil)
        #expect(LocalFiles.contents(atPath: folder) == nil)
        write(String(repeating: "x", count: LocalFiles.readLimit + 1), to: folder + "/long")
        #expect(LocalFiles.contents(atPath: folder + "/long") == nil)
    }

    @Test func existsForFilesAndFoldersOnly() throws {
        let folder = try scratchFolder()
        defer { remove(folder) }
        write("x", to: folder + "/file")
        #expect(LocalFiles.exists(atPath: folder + "/file"))
        #expect(LocalFiles.exists(atPath: folder))
        #expect(!LocalFiles.exists(atPath: folder + "/missing"))
    }

    @Test func makesMissingParentsWithTheModeAndAcceptsExistingFolders() throws {
        let folder = try scratchFolder()
        defer { remove(folder) }
        let nested = folder + "/a/b/c"
        #expect(LocalFiles.makeFolders(atPath: nested, mode: 0o750))
        var info = stat()
        #expect(stat(nested, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFDIR)
        #expect(LocalFiles.makeFolders(atPath: nested))
        write("x", to: folder + "/file")
        #expect(!LocalFiles.makeFolders(atPath: folder + "/file/below"))
    }

    @Test func environmentHoldsWhatSetenvSet() {
        setenv("INTERACTIVED_LOCALFILES_TEST", "a=b", 1)
        defer { unsetenv("INTERACTIVED_LOCALFILES_TEST") }
        #expect(LocalFiles.environment()["INTERACTIVED_LOCALFILES_TEST"] == "a=b")
    }
}
