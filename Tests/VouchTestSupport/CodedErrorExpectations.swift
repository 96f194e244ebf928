public import Testing
public import Vouch

/// The contract every ``CodedError`` keeps, checked on three errors of one type.
public enum CodedErrorExpectations {
    /// Expects `error` and `sameCode` (one code, two reasons) to be equal and to hash alike, and
    /// `error` and `otherCode` (another code) to differ; the description to be `code: reason`
    /// unless `describedByReason`, and `errorDescription` the reason.
    public static func expectShape<Failure: CodedError>(
        _ error: Failure, sameCode: Failure, otherCode: Failure, describedByReason: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error.code == sameCode.code, "not the same code", sourceLocation: sourceLocation)
        #expect(error.reason != sameCode.reason, "not two reasons", sourceLocation: sourceLocation)
        #expect(error == sameCode, sourceLocation: sourceLocation)
        #expect(error.hashValue == sameCode.hashValue, sourceLocation: sourceLocation)
        #expect(Set([error, sameCode]).count == 1, sourceLocation: sourceLocation)
        #expect(error.code != otherCode.code, "not another code", sourceLocation: sourceLocation)
        #expect(error != otherCode, sourceLocation: sourceLocation)
        let description = describedByReason ? error.reason : "\(error.code.rawValue): \(error.reason)"
        #expect(error.description == description, sourceLocation: sourceLocation)
        #expect(error.errorDescription == error.reason, sourceLocation: sourceLocation)
    }

    /// Expects `codes`, a module's own verification codes, to be exactly those of `categories`
    /// (raw value to the category's name), none of them a code of the core's list.
    public static func expectModuleCodes(
        _ codes: [VerificationError.Code], categories: [String: String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let declared = Dictionary(
            codes.map { ($0.rawValue, VerificationError($0, "").category.rawValue) }, uniquingKeysWith: { a, _ in a })
        #expect(declared == categories, sourceLocation: sourceLocation)
        #expect(declared.count == codes.count, "a code is listed twice", sourceLocation: sourceLocation)
        let core = Set(VerificationError.Code.all)
        #expect(codes.allSatisfy { !core.contains($0) }, sourceLocation: sourceLocation)
    }
}
