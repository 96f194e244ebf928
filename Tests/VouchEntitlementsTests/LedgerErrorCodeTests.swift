import Foundation
import Testing
import Vouch
import VouchTestSupport

@testable import VouchEntitlements

/// The ledger's errors in the one error shape: a code, a category, a reason; equality on the code.
struct LedgerErrorCodeTests {
    @Test func aLedgerErrorIsEqualOnItsCodeNotItsReason() {
        CodedErrorExpectations.expectShape(
            LedgerError(.cannotOpen, "cannot open /a.sqlite"),
            sameCode: LedgerError(.cannotOpen, "cannot open /b.sqlite"),
            otherCode: LedgerError(.cannotWrite, "cannot open /a.sqlite"))
        #expect(LedgerError(.accountConflict, "").category == .input)
        #expect(LedgerError(.corruptStore, "").category == .storage)
        #expect(LedgerError(.storeFailure, "").category == .internal)
    }

    @Test func aWrongCatalogThrowsTheInvalidCatalogCode() {
        let error = #expect(throws: ProductCatalog.FormatError.self) { try ProductCatalog(json: Array("[]".utf8)) }
        #expect(error?.code == .invalidCatalog)
        #expect(error?.code.rawValue == "invalid_catalog")
        #expect(error?.category == .configuration)
        #expect(error?.reason == "the catalog must be a JSON object")
        #expect(error?.description == error?.reason)
    }

    @Test func twoCatalogErrorsAreEqualOnTheirCode() {
        let notJSON = #expect(throws: ProductCatalog.FormatError.self) { try ProductCatalog(json: Array("{".utf8)) }
        let notAnObject = #expect(throws: ProductCatalog.FormatError.self) {
            try ProductCatalog(json: Array("[]".utf8))
        }
        #expect(notJSON != nil && notJSON?.reason != notAnObject?.reason)
        #expect(notJSON == notAnObject)
    }

    @Test func aStoredRecordThatDoesNotReadThrowsTheUnreadableRecordCode() {
        for bytes in ["[]", #"{"kind":"transaction","channel":"play_store"}"#, #"{"kind":"nothing"}"#] {
            #expect {
                try LedgerRecordJSON.read(Array(bytes.utf8))
            } throws: { error in
                (error as? RecordFormatError)?.code == .unreadableRecord
                    && (error as? RecordFormatError)?.category == .storage
            }
        }
        #expect(RecordFormatError(reason: "a") == RecordFormatError(reason: "b"))
    }
}
