// malloc_trim for json-bench: Swift's Glibc module does not export <malloc.h>.
#include <malloc.h>
