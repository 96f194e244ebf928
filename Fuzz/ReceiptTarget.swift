@testable internal import Vouch
@testable internal import VouchReceipts

/// The receipt container: the input is the bytes of a receipt (real ones as seeds).
///
/// Properties: only receipt-level codes come out of verification (a fixed verifier, the
/// embedded Apple Inc. Root, validation at a fixed instant, so the chain is really checked);
/// an accepted container's content lies inside the input, it names one signer and at most
/// eight certificates; `ReceiptInspection` agrees with the container.
func fuzzReceipt(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let allowed: Set<VerificationError.Code> = [
        .receiptNotAReceipt, .receiptTooLarge, .receiptMalformedContainer, .receiptUnsupportedAlgorithm,
        .receiptSignerNotFound, .receiptMalformedPayload, .receiptDuplicateAttribute, .badCertificateEncoding,
        .untrustedChain, .certificateExpired, .certificateNotYetValid, .unsupportedCertificateVersion,
        .missingMarkerOID,
        .wrongKeyType, .leafIsCA,
        .badSignature, .xcodeNotTrusted, .wrongEnvironment,
    ]
    do throws(VerificationError) {
        let container = try ReceiptContainer(bytes)
        require(
            container.content.allSatisfy { $0.lowerBound >= 0 && $0.upperBound <= bytes.count },
            "content outside the input")
        require(container.certificates.count <= ReceiptContainer.maximumCertificates, "too many certificates")
        require([ReceiptContainer.Digest.sha1, .sha256].contains(container.digest), "digest")
        let inspection = try ReceiptInspection(receipt: bytes)
        require(inspection.certificates.count == container.certificates.count, "inspection certificates")
    } catch {
        require(allowed.contains(error.code), "container gave \(error.code)")
    }
    do throws(VerificationError) {
        _ = try receiptVerifier.verify(bytes)
    } catch {
        require(allowed.contains(error.code), "verify gave \(error.code)")
    }
}

/// The receipt payload: the input is a signed content (an attribute set, DER or BER).
///
/// Properties: only payload codes come out; an accepted payload repeats no attribute type but
/// 17, every in-app purchase repeats none, and both JSON renderings are written.
func fuzzReceiptPayload(_ input: UnsafeRawBufferPointer) {
    do throws(VerificationError) {
        let receipt = try AppReceipt(payload: Array(input))
        let types = receipt.attributes.map(\.type).filter { $0 != 17 }
        require(Set(types).count == types.count, "a repeated attribute type was accepted")
        require(receipt.inApp.count == receipt.attributes.filter { $0.type == 17 }.count, "in-app count")
        for purchase in receipt.inApp {
            require(Set(purchase.attributes.map(\.type)).count == purchase.attributes.count, "a repeated in-app type")
        }
        _ = JSONWriter.encode(.object(receipt.jsonObject))
        _ = JSONWriter.encode(.object(receipt.verifyReceiptResponse))
    } catch {
        require(
            [.receiptMalformedPayload, .receiptDuplicateAttribute].contains(error.code), "payload gave \(error.code)")
    }
}

let receiptVerifier: ReceiptVerifier = {
    var configuration = ReceiptVerifier.Configuration.acceptingAnyApp()
    configuration.validationTime = .fixed(Timestamp(milliseconds: 1_700_000_000_000))
    return try! ReceiptVerifier(configuration: configuration)
}()
