#ifndef VOUCH_CSQLITE_SHIM_H
#define VOUCH_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, invisible to Swift: SQLite copies a
// value bound with it before the call returns.
static inline sqlite3_destructor_type vouch_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
