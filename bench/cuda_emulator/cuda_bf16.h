// See cuda_fp16.h here: the emulator's 16-bit types live there, both of them.
#pragma once
#include "cuda_fp16.h"
