/* A C program that runs a library compiled by attune-compile through the
 * runtime's C API: open, inspect, run, handle errors, close.
 *
 *   ./c_api_example libgpt2_block.so
 */
#include <attune/runtime.h>

#include <stdio.h>
#include <stdlib.h>

static void print_info(const char *kind, const attune_tensor_info_t *info) {
  printf("%s '%s': %s[", kind, info->name, attune_dtype_name(info->dtype));
  for (int32_t d = 0; d < info->rank; ++d) {
    if (info->dims[d] < 0)
      printf("%s%s", d ? " x " : "", info->dim_names[d]);
    else
      printf("%s%lld", d ? " x " : "", (long long)info->dims[d]);
  }
  printf("]\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LIBRARY.so\n", argv[0]);
    return 1;
  }
  attune_model_t *model = NULL;
  if (attune_model_open(argv[1], &model) != ATTUNE_OK) {
    fprintf(stderr, "error: %s\n", attune_status_message());
    return 1;
  }
  printf("model '%s'\n", attune_model_name(model));
  attune_tensor_info_t info;
  for (int32_t i = 0; i < attune_model_num_inputs(model); ++i)
    if (attune_model_input_info(model, i, &info) == ATTUNE_OK)
      print_info("input", &info);
  for (int32_t i = 0; i < attune_model_num_outputs(model); ++i)
    if (attune_model_output_info(model, i, &info) == ATTUNE_OK)
      print_info("output", &info);

  /* This example expects one token-id input [batch, seq] and one output. */
  if (attune_model_num_inputs(model) != 1 || attune_model_num_outputs(model) != 1) {
    fprintf(stderr, "error: expected a model with one input and one output\n");
    attune_model_close(model);
    return 1;
  }
  enum { kSeq = 16 };
  int32_t ids[kSeq];
  for (int i = 0; i < kSeq; ++i)
    ids[i] = 464 + 37 * i; /* arbitrary ids below the vocabulary size */
  attune_tensor_t input = {ids, ATTUNE_DTYPE_I32, 2, {1, kSeq}};

  attune_tensor_t output;
  if (attune_model_output_shape(model, &input, 1, 0, &output) != ATTUNE_OK) {
    fprintf(stderr, "error: %s\n", attune_status_message());
    attune_model_close(model);
    return 1;
  }
  size_t count = 1;
  for (int32_t d = 0; d < output.rank; ++d)
    count *= (size_t)output.shape[d];
  output.data = calloc(count, attune_dtype_size(output.dtype));
  if (attune_model_run(model, &input, 1, &output, 1) != ATTUNE_OK) {
    fprintf(stderr, "error: %s\n", attune_status_message());
  } else {
    const float *y = output.data;
    printf("ran on %d tokens: y[0, 0, 0:4] = %.5f %.5f %.5f %.5f\n", kSeq, y[0], y[1], y[2],
           y[3]);
  }

  /* Bad input is an error status with a message, never a crash. */
  ids[3] = 1 << 30;
  if (attune_model_run(model, &input, 1, &output, 1) != ATTUNE_OK)
    printf("an out-of-range id is refused: %s\n", attune_status_message());

  free(output.data);
  attune_model_close(model);
  return 0;
}
