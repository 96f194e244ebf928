/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny, fast generator whose whole output is a
/// function of its seed, on every platform and Swift version.
///
/// Payload values come only from here, never from the system generator, so the same seed mints
/// the same payloads. It deliberately does not conform to `RandomNumberGenerator`: the standard
/// library's `random(in:using:)` algorithms are not promised to stay the same across releases.
package struct SplitMix64 {
    package private(set) var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    /// The generator for item `index` of a run seeded with `seed`: independent streams, so item
    /// 7 is the same whether or not items 0…6 were made first.
    package init(seed: UInt64, index: UInt64) {
        state = Self.mix(Self.mix(seed) ^ (index &* 0xD1B5_4A32_D192_ED03 &+ 0x8CB9_2BA7_2F3D_8DD7))
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// The SplitMix64 output function, a bijection on 64-bit integers.
    package static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (`bound` > 0), by multiply-and-shift; the bias is below 2⁻³² for the
    /// small bounds used here.
    package mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A value in `range`.
    package mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    /// A 64-bit value in `range`.
    package mutating func int64(in range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        let offset = span == 0 ? next() : next().multipliedFullWidth(by: span).high
        return range.lowerBound &+ Int64(bitPattern: offset)
    }

    /// `true` with probability `percent` / 100.
    package mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }

    /// One element, chosen uniformly.
    package mutating func pick<T>(_ elements: [T]) -> T {
        elements[below(elements.count)]
    }

    /// One element, chosen with the given relative weights.
    package mutating func pick<T>(weighted elements: [(T, Int)]) -> T {
        var roll = below(elements.reduce(0) { $0 + $1.1 })
        for (element, weight) in elements {
            if roll < weight { return element }
            roll -= weight
        }
        return elements[elements.count - 1].0
    }

    /// A random (version 4) UUID in lowercase text.
    package mutating func uuid() -> String {
        var bytes = bytes(16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    package mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            var word = next()
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return Array(bytes.prefix(count))
    }
}
