extension ReceiptVerifier {
    /// A verifier with the default configuration: the embedded Apple Inc. Root, validation at
    /// each receipt's creation date.
    public static let standard: ReceiptVerifier = try! ReceiptVerifier()
}
