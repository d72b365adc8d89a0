// ---- entry: initialise mbarriers, then one branch per warpgroup ----
extern "C" __global__ void __launch_bounds__(384, 1) pipelink_kernel(const __grid_constant__ pl::Args args) {
  extern __shared__ __align__(1024) unsigned char pl_smem[];
#ifdef PL_CHECKED
  if ((pl::smem_addr(pl_smem) & 1023u) != 0) asm volatile("trap;");
#endif
  if (threadIdx.x == 0) {
    const unsigned base = pl::smem_addr(pl_smem);
    for (unsigned j = 0; j < 4u; ++j) pl::mbar_init(base + 196608u + 8u * j, 1u);  // pipe ab full
    for (unsigned j = 0; j < 4u; ++j) pl::mbar_init(base + 196640u + 8u * j, 8u);  // pipe ab empty
    for (unsigned j = 0; j < 2u; ++j) pl::mbar_init(base + 196672u + 8u * j, 2u);  // pipe c full
    for (unsigned j = 0; j < 2u; ++j) pl::mbar_init(base + 196688u + 8u * j, 2u);  // pipe c empty
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const unsigned warp = threadIdx.x >> 5;
  pl::Ctx ctx;
  ctx.args = &args;
  ctx.smem = pl_smem;
  if (warp < 4u) {  // warpgroup 0
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    asm volatile("griddepcontrol.wait;" ::: "memory");  // pdl: after the prologue, before any role
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (warp < 4u) {  // mma_consumer#0
      ctx.slots = &pl_slots_1;
      mma_consumer_main(ctx);
    }
  } else if (warp < 8u) {  // warpgroup 1
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    asm volatile("griddepcontrol.wait;" ::: "memory");  // pdl: after the prologue, before any role
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (warp >= 4u && warp < 8u) {  // mma_consumer#1
      ctx.slots = &pl_slots_2;
      mma_consumer_main(ctx);
    }
  } else if (warp < 12u) {  // warpgroup 2
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    asm volatile("griddepcontrol.wait;" ::: "memory");  // pdl: after the prologue, before any role
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (warp >= 8u && warp < 10u) {  // tile_writer
      ctx.slots = &pl_slots_3;
      tile_writer_main(ctx);
    }
    else if (warp >= 10u && warp < 11u) {  // tma_loader
      ctx.slots = &pl_slots_0;
      tma_loader_main(ctx);
    }
  }
}
