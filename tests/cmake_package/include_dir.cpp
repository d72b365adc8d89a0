// Prints where the linker library looks for pipelink/device.cuh.
#include <iostream>

#include "pipelink/pipelink.h"

int main() {
  std::cout << pipelink::default_include_dir() << "\n";
  return pipelink::default_include_dir().empty() ? 1 : 0;
}
