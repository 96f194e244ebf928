/// The member names and enum values of the App Store's payloads, for the payload parser
/// (``JSONVocabulary``): the names the models read, and the documented values of their
/// enum-like fields.
///
/// ``names`` and ``values`` are generated from the payload table as literals: a literal's
/// storage is immortal, so the threads that share these strings never contend for a reference
/// count. A test checks the names against the models' property names.
enum PayloadVocabulary {
    static let shared = JSONVocabulary(names + values)
}
