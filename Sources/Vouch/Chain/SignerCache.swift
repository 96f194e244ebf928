internal import Foundation
internal import VouchOpenSSL

/// A header seen before, with what was learnt from it: its parsed certificates, the leaf key,
/// and once the path has been validated, the window in which that result holds.
///
/// Only headers that passed every header check are cached, so a hit means the same bytes
/// would pass them again.
final class Signer: Sendable {
    enum Anchor: Sendable {
        /// `x5c` is leaf, intermediate, root; the path is validated to the trust anchors.
        case chain(leaf: Certificate, intermediate: Certificate)
        /// `x5c` is one certificate byte-equal to a trusted Xcode certificate.
        case xcode(Certificate)
    }

    let segment: [UInt8]
    let anchor: Anchor
    let key: PublicKey
    /// Set after the first successful validation; the certificates alone decide it.
    let validatedWindow = Locked<ChainValidator.Window?>(nil)
    /// The leaf key prepared for many verifications, once it has signed enough tokens.
    let fixedKey = FixedKeySlot()
    /// SHA-256 of the segment and its ".", to continue with each token's payload.
    let headerDigest: HeaderDigest
    /// What every verified token of this signer carries, read once: the certificate whose key
    /// signs, the header's `kid`, and whether a trusted Xcode certificate is the anchor. (Every
    /// thread reads a shared signer; copying its anchor per token would retain and release
    /// what it holds.)
    let leafCertificate: Certificate
    let keyIdentifier: String?
    let isXcode: Bool

    init(segment: [UInt8], header: ProtectedHeader, anchor: Anchor, key: PublicKey) {
        self.segment = segment
        self.anchor = anchor
        self.key = key
        headerDigest = HeaderDigest(segment: segment)
        keyIdentifier = header.keyIdentifier
        switch anchor {
        case .chain(let leaf, _):
            leafCertificate = leaf
            isXcode = false
        case .xcode(let certificate):
            leafCertificate = certificate
            isXcode = true
        }
    }

    /// Whether `segment` is this signer's header segment, byte for byte.
    func hasSegment(_ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        self.segment.count == segment.count
            && self.segment.withUnsafeBufferPointer { stored in
                segment.isEmpty || memcmp(stored.baseAddress!, segment.baseAddress!, segment.count) == 0
            }
    }
}

/// A small, bounded, thread-safe set of recently seen signers, found by comparing the header
/// segment's bytes. App Store data uses few signing certificates at a time (one leaf lives
/// about two years), so a short list searched from the most recent entry is enough.
final class SignerCache: Sendable {
    private let entries = Locked<[Signer]>([])
    let capacity: Int

    init(capacity: Int = 32) {
        self.capacity = capacity
    }

    func signer(forHeader segment: UnsafeBufferPointer<UInt8>) -> Signer? {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.hasSegment(segment) }) else { return nil }
            if index > 0 { entries.swapAt(index, index - 1) }
            return entries[index > 0 ? index - 1 : 0]
        }
    }

    /// The cached signers, most recent first.
    var signers: [Signer] { entries.withLock { $0 } }

    func insert(_ signer: Signer) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeLast() }
            entries.insert(signer, at: 0)
        }
    }
}
