internal import Foundation

/// Texts a parser meets again and again (the member names and enum values of App Store
/// payloads), each held once: the parser hands out the held `String` for bytes that spell one,
/// instead of decoding and allocating a new string per occurrence.
///
/// The table lives in memory of its own, read through pointers (``Table``): every payload's
/// parse looks names up here, on every thread at once, and reading a Swift array held by a
/// shared object, or the object itself, would retain and release it, a contended reference
/// count on each lookup.
package final class JSONVocabulary: @unchecked Sendable {
    /// The table, owned here and freed with the vocabulary.
    let table: Table

    /// A vocabulary of `words` (duplicates are held once). Written once here, only read after.
    package init(_ words: some Sequence<String>) {
        var unique: [String] = []
        var seen = Set<String>()
        for word in words where seen.insert(word).inserted { unique.append(word) }
        var bytes: [UInt8] = []
        var starts: [Int] = [0]
        var hashes: [UInt64] = []
        for word in unique {
            let utf8 = Array(word.utf8)
            bytes += utf8
            starts.append(bytes.count)
            hashes.append(utf8.withUnsafeBufferPointer { Table.hash($0) })
        }
        var capacity = 16
        while capacity < unique.count * 4 { capacity *= 2 }
        var slots = [Int32](repeating: 0, count: capacity)
        for (index, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & (capacity - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = Int32(index + 1)
        }
        func copy<Element>(_ array: [Element]) -> UnsafeMutableBufferPointer<Element> {
            let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(array.count, 1))
            _ = buffer.initialize(from: array)
            return buffer
        }
        table = Table(
            slots: copy(slots), mask: capacity - 1, hashes: copy(hashes), words: copy(unique), bytes: copy(bytes),
            starts: copy(starts), wordCount: unique.count, maximumLength: unique.map(\.utf8.count).max() ?? 0)
    }

    deinit {
        table.words.baseAddress!.deinitialize(count: table.wordCount)
        table.slots.deallocate()
        table.hashes.deallocate()
        table.words.deallocate()
        table.bytes.deallocate()
        table.starts.deallocate()
    }

    /// The held string spelled by `text`, or `nil`.
    func word(_ text: UnsafeBufferPointer<UInt8>) -> String? { table.word(text) }

    /// The vocabulary's memory, read through pointers and nothing else: a parser holds this
    /// (while something holds the vocabulary) rather than the object, since every use of a
    /// shared object's reference retains and releases it, and the threads parsing at once
    /// would contend for its reference count on every name.
    struct Table: @unchecked Sendable {
        /// Open addressing, a power of two slots, at most a quarter full: slot `i` holds the
        /// index + 1 of a word, 0 when empty.
        fileprivate let slots: UnsafeMutableBufferPointer<Int32>
        fileprivate let mask: Int
        fileprivate let hashes: UnsafeMutableBufferPointer<UInt64>
        fileprivate let words: UnsafeMutableBufferPointer<String>
        /// The words' UTF-8 bytes one after another; word `i` spans `starts[i]..<starts[i + 1]`.
        fileprivate let bytes: UnsafeMutableBufferPointer<UInt8>
        fileprivate let starts: UnsafeMutableBufferPointer<Int>
        /// How many of `words` are initialized (the buffers hold at least one slot).
        fileprivate let wordCount: Int
        /// The longest word held: longer bytes are not looked up.
        let maximumLength: Int

        /// The length and the first and last eight bytes, mixed: a constant number of steps
        /// whatever the length (a byte-serial hash makes the parser wait on a multiplication per
        /// byte). Texts differing elsewhere collide and are told apart by the comparison.
        @inline(__always)
        static func hash(_ text: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var head: UInt64 = 0
            var tail: UInt64 = 0
            if text.count >= 8 {
                let base = UnsafeRawPointer(text.baseAddress!)
                head = base.loadUnaligned(as: UInt64.self)
                tail = base.loadUnaligned(fromByteOffset: text.count - 8, as: UInt64.self)
            } else {
                for (index, byte) in text.enumerated() { head |= UInt64(byte) << (8 * index) }
            }
            var hash = (head &* 0x9E37_79B9_7F4A_7C15) ^ (tail &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(text.count)
            hash ^= hash >> 29
            return hash &* 0xBF58_476D_1CE4_E5B9
        }

        /// The held string spelled by `text`, or `nil`.
        @inline(__always)
        func word(_ text: UnsafeBufferPointer<UInt8>) -> String? {
            guard text.count <= maximumLength else { return nil }
            let hash = Self.hash(text)
            var slot = Int(truncatingIfNeeded: hash) & mask
            while true {
                let entry = Int(slots[slot])
                if entry == 0 { return nil }
                let index = entry - 1
                if hashes[index] == hash, starts[index + 1] - starts[index] == text.count,
                    text.isEmpty || memcmp(bytes.baseAddress! + starts[index], text.baseAddress!, text.count) == 0
                {
                    return words[index]
                }
                slot = (slot + 1) & mask
            }
        }
    }
}
