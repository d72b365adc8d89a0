# The modified-facts cases: in each, ONE owner changes ONE constant in the MoE gate/up kernel,
# and only that owner's component is rebuilt. Fields: name | component | its contract (original) |
# sed expression applied to that contract | extra nvcc flags for its object | expected.
#   expected: "ok" = PipeLink must link a correct kernel; "refuse" = PipeLink must refuse it.
M=examples/moe
CASES=(
  "stages-3-to-2|moe_w_loader|$M/gemm/w_loader.toml|s/^stages = 3/stages = 2/||ok"
  "tile-width-128-to-104|wgmma_gu|$M/gemm/mma_gu.toml|s/^tile_n = 128/tile_n = 104/;s/^instances = 2/defines   = [\"GU_TILE_N=104\"]\ninstances = 2/|-DGU_TILE_N=104|ok"
  "tile-width-128-to-80|wgmma_gu|$M/gemm/mma_gu.toml|s/^tile_n = 128/tile_n = 80/;s/^instances = 2/defines   = [\"GU_TILE_N=80\"]\ninstances = 2/|-DGU_TILE_N=80|ok"
  "out-rows-64-to-32|moe_swiglu|$M/activation/contract.toml|s/^out_rows = 64/out_rows = 32/||ok"
  "gather-warps-4-to-2|moe_gather|$M/dispatch/gather.toml|s/^count     = 4/count     = 2/;s/^warpgroup = true/warpgroup = false/;s/^source = \"moe_gather.cu\"/source = \"moe_gather.cu\"\ndefines = [\"GATHER_WARPS=2\"]/|-DGATHER_WARPS=2|ok"
  "stages-3-to-1|moe_w_loader|$M/gemm/w_loader.toml|s/^stages = 3/stages = 1/||refuse"
  "stages-3-to-4|moe_w_loader|$M/gemm/w_loader.toml|s/^stages = 3/stages = 4/||refuse"
  # The code-only half: the owner edits the source and rebuilds; the contract is left stale
  # (empty sed expression). The records the code declares (pipelink/device.cuh) follow the edit.
  "code-tile-width-128-to-104|wgmma_gu|$M/gemm/mma_gu.toml||-DGU_TILE_N=104|refuse"
  "code-tile-width-128-to-80|wgmma_gu|$M/gemm/mma_gu.toml||-DGU_TILE_N=80|refuse"
  "code-one-warpgroup-64x104|wgmma_gu|$M/gemm/mma_gu.toml||-DGU_TILE_N=104 -DGU_SPLIT_N=1 -DGU_INSTANCES=1|refuse"
  "code-gather-warps-4-to-2|moe_gather|$M/dispatch/gather.toml||-DGATHER_WARPS=2|refuse"
  "code-commit-once|moe_swiglu|$M/activation/contract.toml||-DMOE_SWIGLU_COMMIT_ONCE|refuse"
)
