import Foundation
import Testing
@testable import InteractiveDaemon

/// Every MESSAGE_ID has an entry in the message catalog and in docs/journal.md, and nothing else.
@Suite struct LogCatalogTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private func text(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: Self.root.appendingPathComponent(path)), as: UTF8.self)
    }

    @Test func theCatalogExplainsEveryMessageIdAndNoOther() throws {
        let catalog = try text("systemd/interactived.catalog")
        let catalogIds = catalog.split(separator: "\n").filter { $0.hasPrefix("-- ") }.map { String($0.dropFirst(3)) }
        #expect(Set(catalogIds) == Set(LogMessageID.allCases.map(\.rawValue)))
        #expect(catalogIds.count == LogMessageID.allCases.count)
        for entry in catalog.components(separatedBy: "\n-- ").dropFirst() {
            #expect(entry.contains("\nSubject: "))
            #expect(entry.contains("\nDefined-By: interactived\n"))
        }
    }

    @Test func theDocsListEveryMessageId() throws {
        let docs = try text("docs/journal.md")
        for id in LogMessageID.allCases { #expect(docs.contains(id.rawValue), "docs/journal.md lacks \(id)") }
    }
}
