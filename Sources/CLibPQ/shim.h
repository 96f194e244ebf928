#ifndef VOUCH_CLIBPQ_SHIM_H
#define VOUCH_CLIBPQ_SHIM_H

// libpq, PostgreSQL's client library. Debian's libpq.pc puts /usr/include/postgresql on the
// include path, where libpq-fe.h and the headers it includes (postgres_ext.h, pg_config_ext.h)
// live; the server's headers are not needed.
#include <libpq-fe.h>

// PG_DIAG_SQLSTATE is a character literal, invisible to Swift: the field code of an error's
// SQLSTATE for PQresultErrorField.
static inline int vouch_pq_diag_sqlstate(void) {
    return PG_DIAG_SQLSTATE;
}

#endif
