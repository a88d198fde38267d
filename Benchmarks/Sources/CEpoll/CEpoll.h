// epoll for ipc-bench's readers: Swift's Glibc module does not export <sys/epoll.h>.
#include <sys/epoll.h>
