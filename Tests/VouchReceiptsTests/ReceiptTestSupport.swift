import Foundation
import Testing
import VouchOpenSSL
import VouchTestSupport

@testable import Vouch
@testable import VouchReceipts

/// The real receipts of the shared test vectors' `receipts/` folder (``SharedVectors``), read
/// at test time and never copied into the project. The tests that read them carry
/// `.sharedVectors("receipts")`, so they are skipped, saying why, where the folder is absent.
enum SharedReceipts {
    static let directory = SharedVectors.url("receipts")

    static var isAvailable: Bool { SharedVectors.has("receipts") }

    static func bytes(_ path: String) throws -> [UInt8] {
        try SharedVectors.bytes("receipts/\(path)")
    }

    /// One line of `manifest.tsv`, by column name.
    struct Entry: Sendable, CustomTestStringConvertible {
        let fields: [String: String]
        var name: String { fields["name"]! }
        var testDescription: String { name }
        var isXcode: Bool { fields["environment"] == "Xcode" }
        var bundleId: String { fields["bundle_id"]! }
        var inAppCount: Int { Int(fields["n_in_app"]!.prefix { $0.isNumber })! }
        var productIds: Set<String> { Set(fields["product_ids"]!.split(separator: ";").map(String.init)) }
        var creationDate: String { fields["creation_date"]! }
        var applicationVersion: String { fields["app_version"]! }
        /// The environment the receipt type (attribute 0) names.
        var environment: AppStoreEnvironment {
            switch fields["environment"] {
            case "Production": .production
            case "Xcode": .xcode
            default: .sandbox
            }
        }
    }

    static func manifest(_ path: String = "manifest.tsv") -> [Entry] {
        guard isAvailable, let text = try? String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
        else { return [] }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        let header = lines[0].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        return lines.dropFirst().map { line in
            let values = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Entry(
                fields: Dictionary(
                    uniqueKeysWithValues: zip(
                        header, values + Array(repeating: "", count: max(0, header.count - values.count)))))
        }
    }

    static let real = manifest()
    static let storeKitCertificate: [UInt8] = (try? bytes("StoreKitTestCertificate.cer")) ?? []
}

extension ReceiptVerifier {
    /// The code a receipt is rejected with, or `nil` when it verifies.
    func rejection(_ receipt: [UInt8]) -> VerificationError? {
        do {
            _ = try verify(receipt)
            return nil
        } catch {
            return error
        }
    }
}
