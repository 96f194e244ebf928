internal import COpenSSL

/// A parsed ASN.1 object identifier (`ASN1_OBJECT`), owned.
package final class ASN1ObjectIdentifier: @unchecked Sendable {
    private let pointer: OpaquePointer
    /// The dotted form, "1.2.840.113635.100.6.11.1".
    package let dotted: String

    /// Parses the dotted form; a malformed one is a programming error.
    package init(_ dotted: String) {
        // OBJ_txt2obj with no_name = 1 reads the dotted form only; the object is ours.
        self.pointer = OBJ_txt2obj(dotted, 1)!
        self.dotted = dotted
    }

    deinit {
        ASN1_OBJECT_free(pointer)
    }

    /// Runs `body` with the `ASN1_OBJECT`, borrowed for the call.
    func withUnsafePointer<Result>(_ body: (OpaquePointer) -> Result) -> Result {
        body(pointer)
    }
}
