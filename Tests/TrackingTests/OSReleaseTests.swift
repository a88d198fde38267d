import Foundation
import JSONValue
@testable import InteractiveDaemon
import Testing

@Suite struct OSReleaseTests {
    @Test func debian() {
        let text = """
            PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
            NAME="Debian GNU/Linux"
            VERSION_ID="12"
            VERSION="12 (bookworm)"
            ID=debian
            """
        #expect(OSRelease.name(fromContents: text) == "Debian GNU/Linux 12")
    }

    @Test func ubuntuWithCommentsAndBlankLines() {
        let text = "# written by the image build\n\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\n"
        #expect(OSRelease.name(fromContents: text) == "Ubuntu 22.04")
    }

    @Test func prettyNameWithoutCodenameWhenThereIsNoVersion() {
        #expect(OSRelease.name(fromContents: "PRETTY_NAME='Debian GNU/Linux trixie/sid (trixie)'\nNAME=Debian")
            == "Debian GNU/Linux trixie/sid")
        #expect(OSRelease.name(fromContents: "NAME=Buildroot") == "Buildroot")
    }

    @Test func quotesAndEscapes() {
        let fields = OSRelease.fields(#"NAME="My \"Box\" OS"  \#nVERSION_ID=1.2\#nEMPTY=""\#nbroken line"#)
        #expect(fields["NAME"] == #"My "Box" OS"#)
        #expect(fields["VERSION_ID"] == "1.2")
        #expect(fields["EMPTY"] == nil)
        #expect(fields.count == 2)
    }

    @Test func fallbackIsLinux() throws {
        #expect(OSRelease.name(fromContents: "") == "Linux")
        #expect(OSRelease.systemName(paths: ["/nonexistent/os-release"]) == "Linux")
        let directory = try TemporaryDirectory()
        let path = directory.path + "/os-release"
        try "NAME=\"Alpine Linux\"\nVERSION_ID=3.20.1\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(OSRelease.systemName(paths: ["/nonexistent/os-release", path]) == "Alpine Linux 3.20.1")
    }

    @Test func clientContextCarriesTheProfile() throws {
        let context = ClientContextBase(sdkVersion: "1.0", os: "Linux", deviceClass: "settopbox",
                                        viewportWidth: 1920, viewportHeight: 1080)
        var writer = JSONWriter()
        writer.beginObject()
        context.writeMembers(to: &writer)
        writer.member("status", "success")
        writer.endObject()
        let built = try JSONValue.parse(writer.bytes)
        #expect(built["profile"] == "overlay.legacyIframe")
        #expect(built["transportMode"] == "legacyIframe")
        #expect(built["platform"] == "linux")
        #expect(built["status"] == "success")
    }

    /// The members are written once, and again when a field changes (a configuration reload's
    /// viewport, the device class).
    @Test func clientContextFollowsItsChanges() throws {
        var context = ClientContextBase(sdkVersion: "1.0", os: "Linux", deviceClass: "settopbox", viewportWidth: 1920, viewportHeight: 1080)
        context.viewportWidth = 1280
        context.viewportHeight = 720
        context.deviceClass = "kiosk"
        var writer = JSONWriter()
        writer.beginObject()
        context.writeMembers(to: &writer)
        writer.endObject()
        let built = try JSONValue.parse(writer.bytes)
        #expect(built["viewportWidth"] == 1280 && built["viewportHeight"] == 720 && built["deviceClass"] == "kiosk")
        #expect(built["sdkVersion"] == "1.0" && built["os"] == "Linux")
    }
}
