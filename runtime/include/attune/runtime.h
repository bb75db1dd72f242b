/*===- attune/runtime.h - attune runtime C API --------------------*- C -*-===//
 *
 * The one public header of attune's runtime. A library produced by
 * `attune-compile` is opened, inspected and run through these functions from
 * C, C++ or anything with a C FFI.
 *
 * Conventions
 *  - Every function that can fail returns an attune_status_t; 0 is success.
 *    On failure, attune_status_message() returns a message naming what was
 *    wrong, for the calling thread, valid until that thread's next call.
 *  - Output parameters are named out_* and come last.
 *  - Handles are opaque. One attune_model_t may be used by one thread at a
 *    time; separate handles (even of the same library) may run concurrently
 *    on separate threads.
 *  - Buffers passed to attune_model_run are owned by the caller, dense and
 *    row-major; the runtime never keeps a pointer to them after returning.
 *  - No function aborts or throws on bad input.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTUNE_RUNTIME_H
#define ATTUNE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum attune_status {
  ATTUNE_OK = 0,
  ATTUNE_INVALID_ARGUMENT = 1, /* wrong shape, dtype, null pointer, bad id */
  ATTUNE_NOT_FOUND = 2,        /* a file or a name that does not exist */
  ATTUNE_INVALID_LIBRARY = 3,  /* not an attune library, or a corrupt one, or
                                  a weights file that is not the library's */
  ATTUNE_OUT_OF_MEMORY = 4,
  ATTUNE_INTERNAL = 5,         /* a kernel reported an error */
  ATTUNE_NO_DEVICE = 6,        /* no GPU, or no CUDA driver or library that
                                  loads: the machine cannot run the model's
                                  device code */
} attune_status_t;

typedef enum attune_dtype {
  ATTUNE_DTYPE_F32 = 0,
  ATTUNE_DTYPE_F16 = 1,
  ATTUNE_DTYPE_BF16 = 2,
  ATTUNE_DTYPE_I32 = 3,
  ATTUNE_DTYPE_I64 = 4,
  ATTUNE_DTYPE_I8 = 5,
  ATTUNE_DTYPE_BOOL = 6, /* one byte per element, 0 or 1 */
} attune_dtype_t;

#define ATTUNE_MAX_RANK 8

/* Describes one input or output. dims[i] is -1 where the dimension is
 * dynamic; dim_names[i] then names it (e.g. "batch", "seq") and two dynamic
 * dimensions with the same name must be equal at run time. */
typedef struct attune_tensor_info {
  const char *name;
  attune_dtype_t dtype;
  int32_t rank;
  int64_t dims[ATTUNE_MAX_RANK];
  const char *dim_names[ATTUNE_MAX_RANK]; /* NULL for static dimensions */
  /* For integer inputs that index a table (token ids): every element must
   * lie in [0, index_bound). 0 when the input is not range-checked. */
  int64_t index_bound;
} attune_tensor_info_t;

/* A caller-owned dense row-major buffer and its shape. */
typedef struct attune_tensor {
  void *data;
  attune_dtype_t dtype;
  int32_t rank;
  int64_t shape[ATTUNE_MAX_RANK];
} attune_tensor_t;

typedef struct attune_model attune_model_t;
/* A model's descriptor (attune_model_abi_t, see "Library ABI" below);
 * applications only pass it from a statically linked model to
 * attune_model_open_static. */
struct attune_model_abi;

/* Bytes per element of `dtype` (BOOL is one byte); 0 for a value outside
 * attune_dtype_t. */
size_t attune_dtype_size(attune_dtype_t dtype);

/* The dtype's short name ("f32", "i32", "bool", ...), or "unknown" for a
 * value outside attune_dtype_t. A static string. */
const char *attune_dtype_name(attune_dtype_t dtype);

/* The message for the calling thread's last failed call ("" if none). */
const char *attune_status_message(void);

/* Opens a library produced by attune-compile. The returned handle owns the
 * loaded library and a workspace; release it with attune_model_close.
 * Caps the library's kernel dispatch at attune_cpu_isa(): fails with
 * ATTUNE_INVALID_ARGUMENT when ATTUNE_CPU is invalid, and when this process
 * has already run the same library's kernels above that level: a kernel
 * keeps the variant it first chose while its library stays loaded, which
 * may be until the process exits (dlclose need not unload it). */
attune_status_t attune_model_open(const char *path, attune_model_t **out_model);

/* Opens a library as attune_model_open does; for a library compiled with
 * --weights-storage=external, its weights are read from `weights_path` (a
 * file, or a directory holding the file under the name the library records)
 * instead of being searched for (see "External weights" below). A NULL
 * `weights_path` is attune_model_open(path). A library that embeds its
 * weights reads no file: a non-NULL `weights_path` is then
 * ATTUNE_INVALID_ARGUMENT. */
attune_status_t attune_model_open_with_weights(const char *path,
                                               const char *weights_path,
                                               attune_model_t **out_model);

/* Opens a model linked into the program from its static archive (libm.a):
 * `abi` is what the model's descriptor function returns, declared in its
 * generated header as <name>_attune_model_abi(). Checks the descriptor as
 * attune_model_open does; a NULL `abi` is ATTUNE_INVALID_ARGUMENT and a
 * corrupt one ATTUNE_INVALID_LIBRARY. The descriptor stays owned by the
 * model's code; the returned handle owns only a workspace, and
 * attune_model_close releases it without unloading anything. Any number of
 * handles may be opened on one descriptor, and models of different archives
 * linked into one program are independent (each has its own copy of the
 * kernels' runtime and thread pool). Thread-safe. */
attune_status_t attune_model_open_static(const struct attune_model_abi *abi,
                                         attune_model_t **out_model);

/* attune_model_open_static for a model compiled with
 * --weights-storage=external: its weights are read from `weights_path`, as
 * in attune_model_open_with_weights. A static model has no file of its own
 * to look beside, so attune_model_open_static finds such a model's weights
 * only through ATTUNE_WEIGHTS_PATH. A NULL `weights_path` is
 * attune_model_open_static(abi). */
attune_status_t attune_model_open_static_with_weights(
    const struct attune_model_abi *abi, const char *weights_path,
    attune_model_t **out_model);

/*===----------------------------------------------------------------------===
 * External weights. A library compiled with --weights-storage=external keeps
 * its weights out of the .so and .a, in a safetensors file that
 * attune-compile writes beside them (<output stem>.safetensors, the same bytes
 * an embedded library would carry); the library records the file's base
 * name, its size and its XXH64 hash (seed 0). Opening such a model finds the
 * file at the first of
 *   1. the weights_path given to attune_model_open_with_weights or
 *      attune_model_open_static_with_weights;
 *   2. ATTUNE_WEIGHTS_PATH, when set and not empty;
 *   3. the directory of the path attune_model_open was given (not for a
 *      static model, which has no file of its own);
 * where 1 and 2 name the file itself or a directory holding it under its
 * recorded base name. The file is memory-mapped read-only for as long as the
 * handle is open (each handle maps it; the page cache shares the pages) and
 * checked before the handle is returned: a missing file is ATTUNE_NOT_FOUND;
 * one that is not a regular file, has another size or another hash is
 * ATTUNE_INVALID_LIBRARY; every message names the file. The hash check reads
 * the whole file at open: 9 ms for the 186 MB of examples/gpt2-block when it
 * is in the page cache (about 20 GB/s on one core); a file that is not is
 * read from disk at open, in one sequential pass, rather than page by page
 * by the first run (there, 80 ms at open and a 23 ms first run, against a
 * 150-190 ms first run for the same weights embedded).
 * ATTUNE_WEIGHTS_VERIFY=0 skips the hash, leaving the size check, for files
 * too large to read at every open. A file truncated or rewritten in place
 * while a handle maps it is undefined behaviour (as for a loaded .so):
 * replace it by renaming a new file over it, as attune-compile does.
 *===----------------------------------------------------------------------===*/

/* Releases a handle; NULL is ignored. */
void attune_model_close(attune_model_t *model);

/* The model's name as compiled (owned by the model). */
const char *attune_model_name(const attune_model_t *model);

int32_t attune_model_num_inputs(const attune_model_t *model);
int32_t attune_model_num_outputs(const attune_model_t *model);

/* Copies the description of input/output `index` into *out_info; the
 * strings it points to are owned by the model. */
attune_status_t attune_model_input_info(const attune_model_t *model, int32_t index,
                                        attune_tensor_info_t *out_info);
attune_status_t attune_model_output_info(const attune_model_t *model, int32_t index,
                                         attune_tensor_info_t *out_info);

/* Given the shapes of all inputs, the shape of output `index`. */
attune_status_t attune_model_output_shape(const attune_model_t *model,
                                          const attune_tensor_t *inputs,
                                          int32_t num_inputs, int32_t index,
                                          attune_tensor_t *out_shape);

/* Given the shapes of all inputs, the bytes of scratch memory a run with
 * them uses: the model's intermediates, placed by the compiler's memory plan
 * (tensors alive at different times share storage, element-wise kernels
 * overwrite inputs they read for the last time). The handle allocates this
 * on the first run of that size and keeps it; see the plan with
 * `attune-compile --dump-phases-to`. Only shapes are read, as in
 * attune_model_output_shape. 0 when the model has no intermediates. */
attune_status_t attune_model_workspace_size(const attune_model_t *model,
                                            const attune_tensor_t *inputs,
                                            int32_t num_inputs, size_t *out_bytes);

/* Sets how many threads the model's kernels use (1..N); 0 restores the
 * default (all cores, or HL_NUM_THREADS). Applies to every handle of the
 * same library and takes effect from the next run, also after runs: the
 * library's worker threads are stopped and restarted at the new count.
 * Waits for runs in progress on other handles of the same library. */
attune_status_t attune_model_set_num_threads(attune_model_t *model, int32_t num_threads);

/* Runs the model. inputs[i] and outputs[i] follow the order of the model's
 * inputs and outputs; shapes and dtypes are checked against the model, and
 * integer inputs that index a table (token ids) are range-checked. An output
 * buffer may not overlap an input or another output (kernels write outputs
 * while reading inputs): such a call fails with ATTUNE_INVALID_ARGUMENT.
 * Every dynamic dimension must be at least 1: an empty input (batch 0,
 * sequence 0) fails with ATTUNE_INVALID_ARGUMENT naming the input and the
 * dimension, where ONNX Runtime and PyTorch would return an empty output. */
attune_status_t attune_model_run(attune_model_t *model, const attune_tensor_t *inputs,
                                 int32_t num_inputs, attune_tensor_t *outputs,
                                 int32_t num_outputs);

/* Where a model's kernels run: on this process's CPU, or on an NVIDIA GPU
 * (a library compiled with attune-compile --target=cuda). */
typedef enum attune_device {
  ATTUNE_DEVICE_CPU = 0,
  ATTUNE_DEVICE_CUDA = 1,
} attune_device_t;

/* The device the model's kernels run on; ATTUNE_DEVICE_CPU for NULL. */
attune_device_t attune_model_device(const attune_model_t *model);

/* CUDA models. Opening one needs no GPU (its tensors can be inspected
 * anywhere); its first run takes the first GPU (its primary context, as the
 * CUDA runtime and PyTorch use) and uploads the weights, which stay there
 * until attune_model_close. Without a GPU, driver or cuBLASLt, a run fails
 * with ATTUNE_NO_DEVICE naming what is missing. attune_model_run copies the
 * host inputs to the device and the outputs back and returns when they are
 * there. attune_model_run_device is the same run on buffers already on that
 * GPU: every `data` is a device address (CUdeviceptr) in the primary
 * context of device 0; it returns once the outputs are written. Index inputs
 * (token ids) are copied back to be range-checked, as on the CPU. For a CPU
 * model attune_model_run_device is ATTUNE_INVALID_ARGUMENT. */
attune_status_t attune_model_run_device(attune_model_t *model,
                                        const attune_tensor_t *inputs,
                                        int32_t num_inputs,
                                        attune_tensor_t *outputs,
                                        int32_t num_outputs);

/* The tfm IR the library was compiled from (before any pass), and its
 * weights in safetensors format (NULL/0 if none): the embedded bytes, or
 * the mapped external file, valid until attune_model_close. Used by
 * attune-run --check-reference; owned by the model. */
const char *attune_model_source_ir(const attune_model_t *model);
attune_status_t attune_model_weights(const attune_model_t *model, const void **out_data,
                                     size_t *out_size);

/*===----------------------------------------------------------------------===
 * Host CPU. Generated libraries carry one variant of every kernel per
 * instruction-set level and run the best one the process may use; the
 * environment variable ATTUNE_CPU (baseline, avx2, avx512, avx512_zen4,
 * avx512_spr) caps
 * that choice, so a lower level can be run and timed on a bigger machine.
 *===----------------------------------------------------------------------===*/

/* x86-64 instruction-set levels, lowest first. Each includes the ones below. */
typedef enum attune_isa {
  ATTUNE_ISA_BASELINE = 0,   /* x86-64 with SSE2 */
  ATTUNE_ISA_AVX2 = 1,       /* + AVX, AVX2, FMA, F16C */
  ATTUNE_ISA_AVX512 = 2,     /* + AVX-512 F/CD/BW/DQ/VL (Skylake-X, Zen 4/5) */
  ATTUNE_ISA_AVX512_ZEN4 = 3, /* + AVX512-BF16/VNNI/IFMA/VBMI/VBMI2/BITALG/
                                 VPOPCNTDQ, GFNI, VAES, VPCLMULQDQ (Zen 4/5;
                                 only kernels with bf16 weights have it) */
  ATTUNE_ISA_AVX512_SPR = 4, /* + AVX512-FP16, AVX-VNNI, AMX (Sapphire
                                Rapids and later; Linux must grant the
                                process AMX tile state, which detecting this
                                level asks for) */
} attune_isa_t;

/* The highest level this process can execute: the CPU's CPUID feature bits
 * and the register state the OS has enabled (XCR0 through XGETBV) both
 * allow it. Never derived from the CPU's family or model. Thread-safe. */
attune_isa_t attune_host_isa(void);

/* The level's name as ATTUNE_CPU spells it ("avx2", ...), or "unknown". */
const char *attune_isa_name(attune_isa_t isa);

/* Parses a level name as ATTUNE_CPU spells it. */
attune_status_t attune_isa_from_name(const char *name, attune_isa_t *out_isa);

/* The level generated code runs at in this process: attune_host_isa(),
 * capped by ATTUNE_CPU when it is set and not empty. Fails with
 * ATTUNE_INVALID_ARGUMENT, naming the value, when ATTUNE_CPU is not a level
 * name or names a level this machine cannot execute. Thread-safe. */
attune_status_t attune_cpu_isa(attune_isa_t *out_isa);

/* The instruction-set level the model's kernels run at: the highest level
 * any of its kernels chose a variant at, or, before the first run, the level
 * they will choose (attune_cpu_isa() at open, lowered to the best level the
 * library has variants for). Thread-safe. */
attune_status_t attune_model_isa(const attune_model_t *model,
                                 attune_isa_t *out_isa);

/*===----------------------------------------------------------------------===
 * Library ABI: what a generated library exports. Not for applications; it is
 * the contract between attune-compile's output and this runtime.
 *===----------------------------------------------------------------------===*/

#define ATTUNE_MODEL_ABI_VERSION 8u
#define ATTUNE_MODEL_ABI_SYMBOL "attune_model_abi"

typedef struct attune_abi_tensor {
  const char *name;
  int32_t dtype; /* attune_dtype_t */
  int32_t rank;
  /* dims[i] >= 0 is static; dims[i] < 0 is dynamic and equal to the value of
   * symbol (-1 - dims[i]). */
  const int64_t *dims;
  /* > 0 for integer inputs used as indices (token ids): every element must
   * lie in [0, index_bound). 0 otherwise. */
  int64_t index_bound;
} attune_abi_tensor_t;

/* A symbol defined as the sum of other symbols and a constant: the joined
 * dim of a concat whose operands are dynamic (a cache of past keys and the
 * new ones). The runtime computes it once the inputs are bound, in the
 * order of attune_model_abi_t::symbol_sums; each term is a symbol an input
 * binds or an earlier sum defines. Where an input dimension gives the
 * symbol as well, the two must agree. */
typedef struct attune_abi_symbol_sum {
  int32_t symbol;
  int32_t num_terms;
  const int32_t *terms;
  int64_t constant;
} attune_abi_symbol_sum_t;

/* attune_model_abi_t::device: where the library's kernels run. */
enum {
  ATTUNE_ABI_DEVICE_CPU = 0,
  ATTUNE_ABI_DEVICE_CUDA = 1,
};

/* A matrix product a CUDA library leaves to the runtime (cuBLASLt), passed
 * to attune_abi_device_t::matmul with its operands as halide_buffer_t
 * (innermost dimension first, extents and strides in elements, `device`
 * the device address; dimension 1's stride is the leading dimension):
 *  - ATTUNE_ABI_MATMUL_LINEAR: x[M, K], w[K, N], (bias[N] when has_bias)
 *    -> y[M, N] = activation(x w + bias);
 *  - ATTUNE_ABI_MATMUL_BATCHED: a[Bt, M, K] (stored [Bt, K, M] when
 *    transpose_a), b[Bt, K, N] (stored [Bt, N, K] when transpose_b)
 *    -> y[Bt, M, N]; a batch stride of 0 broadcasts an operand.
 * Every operand has the element type of y (f32, f16 or bf16); products
 * accumulate in f32. */
enum {
  ATTUNE_ABI_MATMUL_LINEAR = 0,
  ATTUNE_ABI_MATMUL_BATCHED = 1,
};
enum {
  ATTUNE_ABI_ACTIVATION_NONE = 0,
  ATTUNE_ABI_ACTIVATION_RELU = 1,
  ATTUNE_ABI_ACTIVATION_GELU_TANH = 2,
};
/* How the products of f32 operands may be computed: exactly in f32, with
 * the operands rounded to bf16 (or TF32, the library's choice) on tensor
 * cores, accumulating in f32 (--precision=bf16), or rounded to f16 the same
 * way (--precision=f16). */
enum {
  ATTUNE_ABI_PRODUCTS_F32 = 0,
  ATTUNE_ABI_PRODUCTS_BF16 = 1,
  ATTUNE_ABI_PRODUCTS_F16 = 2,
};
typedef struct attune_abi_matmul {
  int32_t kind; /* ATTUNE_ABI_MATMUL_* */
  int32_t transpose_a, transpose_b;
  int32_t has_bias;
  int32_t activation; /* ATTUNE_ABI_ACTIVATION_* */
  int32_t products;   /* ATTUNE_ABI_PRODUCTS_* */
} attune_abi_matmul_t;

/* A fused attention a CUDA library leaves to the runtime, which launches
 * the library's own kernel for it (compiler/targets/cuda/attention/
 * FlashAttention.cuh, compiled into `image`, a fatbin holding the kernels
 * `kernel` and `combine`; the runtime loads each image once). Passed to
 * attune_abi_device_t::attention with its operands as halide_buffer_t
 * (innermost dimension first, strides in elements, the head dimension
 * contiguous): q [D, Sq, H, B], k [D, Sk, Hkv, B], v [Dv, Sk, Hkv, B],
 * then mask [Sk, Sq, H, B] (f32, stride 0 where it broadcasts) when
 * has_mask, key_padding [Sk, B] (bytes, nonzero attends) when
 * has_key_padding, then the result [Dv, Sq, H, B]. q, k, v and the result
 * are f32 or bf16; the products are bf16 with f32 accumulation
 * (tfm.attention's product_type = bf16). RoPE, when rotary_dims > 0,
 * rotates q and k as they are loaded by position * rope_theta[i] (the
 * rotary_dims / 2 angles, f32), positions offset by rope_offset. Score
 * modifiers, when bias_slopes is not NULL: head h adds bias_slopes[h] *
 * delta (times |delta| when bias_absolute) to the score of distance
 * delta = j - (i + Sk - Sq) (ALiBi); when has_bias_table, a table operand
 * [H, R] (the input type, after key_padding) gives head h
 * table[row, h] with row = bias_rows[clamp(delta - bias_row_low, 0,
 * bias_row_count - 1)] (T5's buckets). Distances outside [delta_low,
 * delta_high] are masked (a window). */
typedef struct attune_abi_attention {
  const void *image;
  const char *kernel;
  const char *combine;
  int32_t head_dim, value_dim;
  int32_t causal, has_mask, has_key_padding;
  int32_t rotary_dims;
  const float *rope_theta;
  int64_t rope_offset;
  double scale;
  double softcap; /* 0: none */
  const float *bias_slopes; /* one per query head, or NULL */
  int32_t bias_absolute;
  int32_t delta_low, delta_high;
  int32_t has_bias_table;
  int32_t bias_row_low, bias_row_count;
  const int32_t *bias_rows; /* bias_row_count rows, or NULL */
} attune_abi_attention_t;

struct halide_buffer_t;

/* What the runtime gives a CUDA library's run(): the device's context and
 * the stream every kernel of the run is queued on (a CUcontext and a
 * CUstream), and the matrix products. run() only queues work; the runtime
 * waits for the stream. */
typedef struct attune_abi_device {
  void *context;
  void *stream;
  /* Queues `op` on `stream`; `args` are its operands in the order above,
   * then y. Returns 0, or nonzero after recording a message the runtime
   * reports (run() then returns ATTUNE_ABI_DEVICE_CALL_FAILED). */
  int32_t (*matmul)(void *user, const attune_abi_matmul_t *op,
                    struct halide_buffer_t *const *args, int32_t num_args);
  void *user;
  /* Called before each kernel or product with its name (the kernel's
   * symbol, "cublasLt linear" or "cublasLt batched matmul") and once after
   * the last with NULL, so that a profiler can mark the stream between
   * them (ATTUNE_CUDA_PROFILE). Never NULL. */
  void (*mark)(void *user, const char *name);
  /* Queues the fused attention `op` on `stream`, as matmul does a product
   * (args in the order attune_abi_attention_t gives). */
  int32_t (*attention)(void *user, const attune_abi_attention_t *op,
                       struct halide_buffer_t *const *args, int32_t num_args);
} attune_abi_device_t;

/* run()'s return value when attune_abi_device_t::matmul or ::attention
 * failed. */
#define ATTUNE_ABI_DEVICE_CALL_FAILED (-1000)

/* attune_model_abi_t::weights_storage. */
enum {
  ATTUNE_WEIGHTS_EMBEDDED = 0, /* `weights` points at the bytes */
  ATTUNE_WEIGHTS_EXTERNAL = 1, /* the bytes are in the file `weights_file` */
};

typedef struct attune_model_abi {
  uint32_t abi_version; /* ATTUNE_MODEL_ABI_VERSION */
  const char *name;
  int32_t num_inputs;
  const attune_abi_tensor_t *inputs;
  int32_t num_outputs;
  const attune_abi_tensor_t *outputs;
  int32_t num_symbols;
  const char *const *symbol_names; /* e.g. "batch", "seq" */
  const int64_t *symbol_max;       /* upper bound per symbol, or -1 */
  /* Bytes of scratch memory one run needs for these symbol values. */
  int64_t (*workspace_size)(const int64_t *symbols);
  /* Runs the kernels in order. Buffers are dense row-major; the workspace is
   * at least workspace_size(symbols) bytes, 64-byte aligned. `weights` is
   * the weights blob (weights_size bytes, 64-byte aligned): `weights` below
   * when embedded, the mapped file when external; the code reads each
   * weight at its offset in it and keeps no pointer to it. Returns 0 or the
   * failing kernel's Halide error code.
   * A CUDA library (device == ATTUNE_ABI_DEVICE_CUDA) takes device
   * addresses for every buffer, its workspace starting with a copy of
   * `constants`, and `device`; a CPU library is passed NULL there. */
  int32_t (*run)(void *const *inputs, void *const *outputs, const int64_t *symbols,
                 void *workspace, const void *weights,
                 const attune_abi_device_t *device);
  void (*set_num_threads)(int32_t num_threads);
  const char *source_ir;
  /* The weights, a safetensors-format blob of weights_size bytes (0: the
   * model has none). ATTUNE_WEIGHTS_EMBEDDED: `weights` points at it.
   * ATTUNE_WEIGHTS_EXTERNAL: `weights` is NULL and the blob is the whole
   * content of a file whose base name (no '/') is `weights_file` and whose
   * XXH64 (seed 0) is `weights_hash`; the runtime maps it. */
  const void *weights;
  int64_t weights_size;
  int32_t weights_storage;  /* ATTUNE_WEIGHTS_EMBEDDED or _EXTERNAL */
  const char *weights_file; /* NULL when embedded */
  uint64_t weights_hash;    /* 0 when embedded */
  /* The message of the last kernel error on the calling thread ("" if none);
   * run clears it on entry. Owned by the library, valid until that thread's
   * next run. Lets the runtime report the kernel's own words, not only its
   * code. */
  const char *(*last_error)(void);
  /* Caps the run-time dispatch of every kernel at `isa` (attune_isa_t):
   * variants that need a feature no variant at or below that level has are
   * refused. Returns the level the kernels will run at (the highest level
   * <= isa the library has variants for), or -1, changing nothing, when a
   * kernel has already chosen a variant above `isa` since the library was
   * loaded: Halide's dispatch wrapper keeps its first choice for the life of
   * the loaded library, so a cap is only sure to hold if set before any run.
   * Without a call, dispatch is capped only by what the CPU can run. */
  int32_t (*set_isa_cap)(int32_t isa);
  /* The highest level (attune_isa_t) any kernel variant was chosen at since
   * the library was loaded; -1 before any kernel with variants has run.
   * Recorded by the dispatch itself, so it shows what really ran. */
  int32_t (*dispatched_isa)(void);
  /* Symbols that are sums of others (attune_abi_symbol_sum_t), in the
   * order the runtime evaluates them. */
  int32_t num_symbol_sums;
  const attune_abi_symbol_sum_t *symbol_sums;
  /* ATTUNE_ABI_DEVICE_CPU or ATTUNE_ABI_DEVICE_CUDA. */
  int32_t device;
  /* CUDA: the tensors the model embeds (constants_size bytes), which the
   * runtime copies to the start of every device workspace it allocates;
   * workspace_size counts them. NULL and 0 on the CPU, which reads them in
   * place. */
  const void *constants;
  int64_t constants_size;
  /* CUDA: frees what the kernels keep on the device (loaded modules, cached
   * allocations) in `context`; the runtime calls it when the library's last
   * open handle closes, before it lets the device go. NULL on the CPU. */
  void (*release_device)(void *context);
} attune_model_abi_t;

/* Exported by every generated shared library under ATTUNE_MODEL_ABI_SYMBOL.
 * In a static archive the same function is the one global symbol, renamed
 * <name>_attune_model_abi (see the generated header) so that several models
 * can be linked into one program. */
typedef const attune_model_abi_t *(*attune_model_abi_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ATTUNE_RUNTIME_H */
