// Base64 decoding, 16 symbols at a time, with SSSE3 byte shuffles.
//
// A symbol is classified by its two nibbles: two 16-entry tables, indexed by the low and by
// the high nibble, give bit sets whose AND is zero exactly for the alphabet's symbols (the
// high-nibble table names the symbol's row of the ASCII table, the low-nibble table which
// rows hold that column invalid). A third table, indexed by the high nibble (moved to 8 + the
// nibble for the one symbol a row shares with letters), gives what to add to the symbol to
// get its 6-bit value. Two multiply-adds pack four 6-bit values into 24 bits, and a shuffle
// puts the three bytes of each group in order.

#include "CVouchBase64.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

// Bit sets per row (high nibble): 0x01 row 2, 0x02 row 3 (digits), 0x04 rows 4 and 6
// (A-O, a-o), 0x08 row 5 (P-Z, and `_` for URL), 0x20 row 7 (p-z), 0x10 every other row
// (always invalid: every low-nibble entry has 0x10).
static const int8_t row_bits[16] = {
    0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x20, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10,
};

// For each column (low nibble), the rows in which that column is not a symbol of the alphabet.
static void column_bits(vouch_base64_alphabet alphabet, int8_t columns[16]) {
    for (int column = 0; column < 16; column++) {
        int bits = 0x10;
        // Row 2: `+` (2B) and `/` (2F) for standard, `-` (2D) for URL.
        int row2 = alphabet == VOUCH_BASE64_URL ? column == 0xD : (column == 0xB || column == 0xF);
        if (!row2) bits |= 0x01;
        if (column > 9) bits |= 0x02;                    // digits 30-39
        if (column == 0) bits |= 0x04;                   // A-O 41-4F, a-o 61-6F
        int row5 = column <= 0xA || (alphabet == VOUCH_BASE64_URL && column == 0xF);  // P-Z, `_` 5F
        if (!row5) bits |= 0x08;
        if (column > 0xA) bits |= 0x20;                  // p-z 70-7A
        columns[column] = (int8_t)bits;
    }
}

// What to add to a symbol of each row; index 8 + row for the row's special symbol (`/` in
// row 2 for standard, `_` in row 5 for URL).
static void offsets(vouch_base64_alphabet alphabet, int8_t table[16]) {
    for (int index = 0; index < 16; index++) table[index] = 0;
    table[3] = 52 - 0x30;                                // digits
    table[4] = table[5] = -0x41;                         // A-Z
    table[6] = table[7] = 26 - 0x61;                     // a-z
    if (alphabet == VOUCH_BASE64_URL) {
        table[2] = 62 - 0x2D;                            // `-`
        table[8 + 5] = 63 - 0x5F;                        // `_`
    } else {
        table[2] = 62 - 0x2B;                            // `+`
        table[8 + 2] = 63 - 0x2F;                        // `/`
    }
}

__attribute__((target("ssse3")))
static size_t decode_ssse3(const uint8_t *input, size_t blocks, uint8_t *output,
                           vouch_base64_alphabet alphabet, int *invalid) {
    int8_t columns[16], roll[16];
    column_bits(alphabet, columns);
    offsets(alphabet, roll);
    const __m128i row_table = _mm_loadu_si128((const __m128i *)row_bits);
    const __m128i column_table = _mm_loadu_si128((const __m128i *)columns);
    const __m128i roll_table = _mm_loadu_si128((const __m128i *)roll);
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i special = _mm_set1_epi8(alphabet == VOUCH_BASE64_URL ? 0x5F : 0x2F);
    const __m128i eight = _mm_set1_epi8(0x08);
    const __m128i pairs = _mm_set1_epi32(0x01400140);
    const __m128i quads = _mm_set1_epi32(0x00011000);
    const __m128i order = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    __m128i errors = _mm_setzero_si128();
    for (size_t block = 0; block < blocks; block++) {
        const __m128i symbols = _mm_loadu_si128((const __m128i *)(input + 16 * block));
        const __m128i rows = _mm_and_si128(_mm_srli_epi32(symbols, 4), nibble);
        const __m128i cols = _mm_and_si128(symbols, nibble);
        errors = _mm_or_si128(errors, _mm_and_si128(_mm_shuffle_epi8(row_table, rows),
                                                    _mm_shuffle_epi8(column_table, cols)));
        const __m128i moved = _mm_or_si128(rows, _mm_and_si128(_mm_cmpeq_epi8(symbols, special), eight));
        const __m128i values = _mm_add_epi8(symbols, _mm_shuffle_epi8(roll_table, moved));
        const __m128i packed = _mm_madd_epi16(_mm_maddubs_epi16(values, pairs), quads);
        _mm_storeu_si128((__m128i *)(output + 12 * block), _mm_shuffle_epi8(packed, order));
    }
    *invalid = _mm_movemask_epi8(_mm_cmpeq_epi8(errors, _mm_setzero_si128())) != 0xFFFF;
    return blocks * 16;
}

size_t vouch_base64_decode_blocks(const uint8_t *input, size_t length, uint8_t *output,
                                  vouch_base64_alphabet alphabet, int *invalid) {
    *invalid = 0;
    if (length < 16 || !__builtin_cpu_supports("ssse3")) return 0;
    return decode_ssse3(input, length / 16, output, alphabet, invalid);
}

#else

size_t vouch_base64_decode_blocks(const uint8_t *input, size_t length, uint8_t *output,
                                  vouch_base64_alphabet alphabet, int *invalid) {
    (void)input, (void)length, (void)output, (void)alphabet;
    *invalid = 0;
    return 0;
}

#endif
