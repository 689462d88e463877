// libpq for PriceDB. libpq-fe.h imports cleanly; this header exists so the
// include path is resolved through pkg-config in one place.
#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
