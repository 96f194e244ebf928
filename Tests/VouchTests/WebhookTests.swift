import Foundation
import Testing
import VouchTestSupport

@testable import Vouch

/// The body App Store Server Notifications V2 posts, read strictly, and the HTTP status a
/// server answers with.
@Suite struct WebhookTests {
    static let realNotification = "apple-real/real/notification-sandbox-21.jws"

    static func body(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func readingError(_ body: [UInt8]) -> VerificationError? {
        do {
            _ = try ResponseBodyV2(json: body)
            return nil
        } catch {
            return error
        }
    }

    @Test func aBodyAsTheAppStorePostsItVerifiesAsItsNotification() throws {
        let token = try TestVectors.text(Self.realNotification)
        let body = try ResponseBodyV2(json: Data(#"{"signedPayload":"\#(token)"}"#.utf8))
        #expect(body.signedPayload == token)
        let verifier = try Verifier(
            configuration: .init(
                bundleId: "com.loki-project.loki-messenger", environments: [.production, .sandbox], appAppleId: 1))
        let notification = try verifier.verify(body)
        #expect(notification.value.notificationType == .didRenew)
        #expect(notification.environment == .sandbox)
        #expect(notification.transaction?.value.transactionId == "2000001024998954")
        #expect(notification.payload == (try verifier.verify(token, as: ResponseBodyV2DecodedPayload.self)).payload)
    }

    @Test func whitespaceAroundTheBodyAndMembersAppleMayAddAreAccepted() throws {
        let read = try ResponseBodyV2(
            json: Self.body("\r\n {\"version\":2, \"signedPayload\" : \"a.b.c\", \"x\":[{}]}\n"))
        #expect(read == ResponseBodyV2(signedPayload: "a.b.c"))
    }

    @Test func aBodyWritesAndReadsBackAsTheAppStorePostsIt() throws {
        let body = ResponseBodyV2(signedPayload: "eyJh.eyJi.c2ln")
        let bytes = JSONWriter.encode(.object(body.json))
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"signedPayload":"eyJh.eyJi.c2ln"}"#)
        #expect(try ResponseBodyV2(json: bytes) == body)
    }

    /// The strict reader of every input: what Foundation's decoders let through is refused, with
    /// the codes `vouch verify` gives the same bytes.
    @Test(arguments: [
        ("", "not a JSON object"),
        ("a.b.c", "not a JSON object"),
        (#"["a.b.c"]"#, "not a JSON object"),
        (#"{"signedPayload":"a.b.c",}"#, "not a strict JSON object"),
        (#"{"signedPayload":"a.b.c","signedPayload":"d.e.f"}"#, "not a strict JSON object"),
        (#"{"signedPayload":"a.b.c"} {}"#, "not a strict JSON object"),
        (#"{"signedPayload":"a.b.c"#, "not a strict JSON object"),
        (#"{"signedPayload":7}"#, "signedPayload is not a string"),
        (#"{"signedPayload":null}"#, "signedPayload is not a string"),
        (#"{"signedTransactionInfo":"a.b.c"}"#, "no signedPayload member"),
        (#"{"data":{"signedPayload":"a.b.c"}}"#, "no signedPayload member"),
    ])
    func aBodyThatIsNotStrictlyANotificationBodyIsMalformed(text: String, reason: String) {
        let error = Self.readingError(Self.body(text))
        #expect(error?.code == .malformedToken, "\(text)")
        #expect(error?.reason.contains(reason) == true, "\(text): \(error?.reason ?? "accepted")")
    }

    @Test func aBodyOfInvalidUTF8OrAByteOrderMarkIsMalformed() {
        #expect(
            Self.readingError([0xEF, 0xBB, 0xBF] + Self.body(#"{"signedPayload":"a.b.c"}"#))?.code == .malformedToken)
        #expect(
            Self.readingError(Self.body(#"{"signedPayload":"a.b"#) + [0xC3, 0x28] + Self.body(#""}"#))?.code
                == .malformedToken)
    }

    @Test func aBodyNestedDeeperThanTheLimitIsTooDeep() {
        let deep =
            #"{"signedPayload":"a.b.c","x":"# + String(repeating: "[", count: 20) + String(repeating: "]", count: 20)
            + "}"
        #expect(Self.readingError(Self.body(deep))?.code == .jsonTooDeep)
    }

    // MARK: The HTTP answer

    @Test func theDocumentedStatusesAreApplesSuccessAndRetryCodes() {
        #expect(WebhookStatus.handled == 200)
        #expect(WebhookStatus.refused == 400)
        #expect(WebhookStatus.failed == 500)
    }

    @Test func everyVerdictOnTheDataIsRefusedAndOnlyAnInternalErrorIsAFailure() {
        for code in VerificationError.Code.all {
            // A nested failure is told by its nested error (below); here a refused one.
            let error =
                code == .nestedTokenInvalid
                ? VerificationError(nestedIn: .signedRenewalInfo, VerificationError(.wrongEnvironment, ""))
                : VerificationError(code, "")
            let expected = code == .internalError ? 500 : 400
            #expect(error.webhookStatus == expected, "\(code)")
            #expect(WebhookStatus.answering(error) == expected, "\(code)")
        }
    }

    @Test func aNestedTokensInternalErrorIsAFailureAndItsRefusalARefusal() {
        let internalError = VerificationError(
            nestedIn: .signedTransactionInfo, VerificationError(.internalError, "no context"))
        #expect(WebhookStatus.answering(internalError) == 500)
        let refused = VerificationError(nestedIn: .signedTransactionInfo, VerificationError(.badSignature, "bad"))
        #expect(WebhookStatus.answering(refused) == 400)
    }

    struct StoreFull: Error {}
    struct ClaimedElsewhere: WebhookError {
        var webhookStatus: Int { WebhookStatus.refused }
    }

    @Test func anErrorThatDoesNotSayIsAFailureAndOneThatSaysIsAnsweredSo() {
        #expect(WebhookStatus.answering(StoreFull()) == 500)
        #expect(WebhookStatus.answering(ClaimedElsewhere()) == 400)
        #expect(WebhookStatus.answering(ConfigurationError(.noTrustAnchors, "")) == 500)
    }

    @Test func aRefusedRealNotificationIsAnsweredAsRefused() throws {
        let token = try TestVectors.text(Self.realNotification)
        let body = try ResponseBodyV2(json: Self.body(#"{"signedPayload":"\#(token)"}"#))
        let verifier = try Verifier(configuration: .init(bundleId: "com.example.app", environment: .sandbox))
        do {
            _ = try verifier.verify(body)
            Issue.record("another app's notification verified")
        } catch {
            #expect(error.code == .wrongBundleId)
            #expect(WebhookStatus.answering(error) == 400)
        }
    }
}
