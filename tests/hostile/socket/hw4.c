/* Connects to the worker's Redis on 127.0.0.1:6379. The sandbox has no network: the connection
 * fails and the program writes nothing (NO); a connection would exit with status 42 (RE). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(6379)};
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
    fprintf(stderr, "CONNECTED to 127.0.0.1:6379\n");
    return 42;
  }
  perror("connect failed");
  return 0;
}
