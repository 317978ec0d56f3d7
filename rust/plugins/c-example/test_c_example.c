/* Tests of sluice_c_example.c, linked with it directly (no dlopen): drives c_clamp and c_scale
   through the descriptor as the host does, with NULLs, offsets, errors and the ownership of
   moved batches and children.

   cc -std=c11 -Wall -Wextra -Werror -O2 -o test_c_example test_c_example.c sluice_c_example.c && ./test_c_example */

#include "../../../plugins-api/include/sluice_plugin.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0, failed = 0;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (cond) {                                                      \
      passed++;                                                      \
    } else {                                                         \
      failed++;                                                      \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                \
  } while (0)

static const struct SluicePlugin *plugin;

static const struct SluiceComponent *component(int32_t kind, const char *name) {
  for (int64_t i = 0; i < plugin->n_components; i++) {
    if (plugin->components[i].kind == kind && strcmp(plugin->components[i].name, name) == 0) return &plugin->components[i];
  }
  return NULL;
}

/* Checks a call's status and message (a message exactly when not OK; `expected` a prefix of it,
   or NULL for OK), freeing the message with the plugin's free_string. */
static void check_status(int32_t status, char *error, int32_t expected_status, const char *expected) {
  CHECK(status == expected_status);
  if (expected == NULL) {
    CHECK(error == NULL);
  } else {
    CHECK(error != NULL && strncmp(error, expected, strlen(expected)) == 0);
    if (error != NULL && strncmp(error, expected, strlen(expected)) != 0) fprintf(stderr, "  message: %s\n", error);
  }
  if (error != NULL) plugin->free_string(error);
}

static bool bit(const void *bits, int64_t i) { return bits == NULL || ((const uint8_t *)bits)[i >> 3] >> (i & 7) & 1; }

/* ---- arrays made by the "host" ---------------------------------------------------------------- */

/* Test arrays point to static data; their release only counts. */
static int array_releases = 0, batch_releases = 0;

static void array_release(struct ArrowArray *array) {
  array->release = NULL;
  array_releases++;
}

static struct ArrowArray primitive(int64_t length, int64_t offset, int64_t null_count, const void **buffers) {
  return (struct ArrowArray){.length = length, .null_count = null_count, .offset = offset, .n_buffers = 2, .buffers = buffers,
                             .release = array_release};
}

/* A batch owning its children structs (heap), released as a whole. */
struct Batch {
  struct ArrowArray *children[3];
  struct ArrowArray child_structs[3];
  const void *buffers[1];
};

static void batch_release(struct ArrowArray *array) {
  struct Batch *batch = array->private_data;
  for (int64_t i = 0; i < array->n_children; i++) {
    if (array->children[i]->release != NULL) array->children[i]->release(array->children[i]);
  }
  free(batch);
  array->release = NULL;
  batch_releases++;
}

static struct ArrowArray make_batch(int64_t length, int64_t offset, int64_t n, const struct ArrowArray *children) {
  struct Batch *batch = calloc(1, sizeof *batch);
  for (int64_t i = 0; i < n; i++) {
    batch->child_structs[i] = children[i];
    batch->children[i] = &batch->child_structs[i];
  }
  return (struct ArrowArray){.length = length, .offset = offset, .n_buffers = 1, .n_children = n, .buffers = batch->buffers,
                             .children = batch->children, .release = batch_release, .private_data = batch};
}

/* ---- c_clamp -------------------------------------------------------------------------------- */

static void test_clamp(void) {
  const struct SluiceComponent *c = component(SLUICE_COMPONENT_SCALAR_UDF, "c_clamp");
  CHECK(c != NULL);
  if (c == NULL) return;
  const struct SluiceScalarUdf *udf = c->vtable;
  CHECK(udf->n_args == 3 && strcmp(udf->arg_types[0], "g") == 0 && strcmp(udf->return_type, "g") == 0);
  CHECK(udf->volatility == SLUICE_VOLATILITY_IMMUTABLE);

  /* value: offset 1 of [9, 1, NULL, 5, -3, 10, 2] -> rows 1, NULL, 5, -3, 10, 2 (6 rows) */
  static const double value_data[] = {9, 1, 0, 5, -3, 10, 2};
  static const uint8_t value_bits[] = {0xFB}; /* bit 2 clear */
  const void *value_buffers[2] = {value_bits, value_data};
  /* lo: no validity buffer, all 0 */
  static const double lo_data[] = {0, 0, 0, 0, 0, 0};
  const void *lo_buffers[2] = {NULL, lo_data};
  /* hi: offset 2 of [., ., 4, 4, 4, NULL, 4, 4] -> 4, 4, 4, NULL, 4, 4 */
  static const double hi_data[] = {-1, -1, 4, 4, 4, 4, 4, 4};
  static const uint8_t hi_bits[] = {0xDF}; /* bit 5 clear */
  const void *hi_buffers[2] = {hi_bits, hi_data};

  struct ArrowArray value = primitive(6, 1, 1, value_buffers);
  struct ArrowArray lo = primitive(6, 0, 0, lo_buffers);
  struct ArrowArray hi = primitive(6, 2, 1, hi_buffers);
  struct ArrowArray *args[3] = {&value, &lo, &hi};
  struct ArrowArray out;
  char *error = NULL;
  int32_t status = udf->invoke(udf->state, args, 6, &out, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  if (status == SLUICE_PLUGIN_OK) {
    /* expected: 1, NULL (value), 4, NULL (hi), 4, 2 */
    const double *v = out.buffers[1];
    CHECK(out.length == 6 && out.offset == 0 && out.n_buffers == 2 && out.null_count == 2);
    CHECK(bit(out.buffers[0], 0) && !bit(out.buffers[0], 1) && bit(out.buffers[0], 2) && !bit(out.buffers[0], 3) &&
          bit(out.buffers[0], 4) && bit(out.buffers[0], 5));
    CHECK(v[0] == 1 && v[2] == 4 && v[4] == 4 && v[5] == 2);
    out.release(&out);
    CHECK(out.release == NULL);
  }
  /* The arguments were borrowed: not released. */
  CHECK(array_releases == 0 && value.release != NULL && lo.release != NULL && hi.release != NULL);

  /* No NULLs: no validity buffer; NaN passes through. */
  static const double nan_data[] = {NAN, -7};
  const void *nan_buffers[2] = {NULL, nan_data};
  struct ArrowArray nan_value = primitive(2, 0, 0, nan_buffers);
  struct ArrowArray lo2 = primitive(2, 0, 0, lo_buffers);
  struct ArrowArray hi2 = primitive(2, 2, 0, hi_buffers);
  struct ArrowArray *args2[3] = {&nan_value, &lo2, &hi2};
  error = NULL;
  status = udf->invoke(udf->state, args2, 2, &out, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  if (status == SLUICE_PLUGIN_OK) {
    CHECK(out.null_count == 0 && out.buffers[0] == NULL && isnan(((const double *)out.buffers[1])[0]) &&
          ((const double *)out.buffers[1])[1] == 0);
    out.release(&out);
  }

  /* lo > hi: a bad record. */
  struct ArrowArray *args3[3] = {&nan_value, &hi2, &lo2};
  error = NULL;
  status = udf->invoke(udf->state, args3, 2, &out, &error);
  check_status(status, error, SLUICE_PLUGIN_BAD_DATA, "c_clamp: lo 4 is greater than hi 0");

  /* Zero rows. */
  error = NULL;
  status = udf->invoke(udf->state, args2, 0, &out, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  if (status == SLUICE_PLUGIN_OK) {
    CHECK(out.length == 0);
    out.release(&out);
  }
}

/* ---- c_scale -------------------------------------------------------------------------------- */

static struct ArrowSchema field(const char *format, const char *name, int64_t flags) {
  return (struct ArrowSchema){.format = format, .name = name, .flags = flags};
}

static void noop_schema_release(struct ArrowSchema *schema) { schema->release = NULL; }

static void test_scale(void) {
  const struct SluiceComponent *c = component(SLUICE_COMPONENT_TRANSFORM, "c_scale");
  CHECK(c != NULL && c->options_schema != NULL);
  if (c == NULL) return;
  const struct SluiceTransform *t = c->vtable;

  /* Input schema: x int64, name utf8 (with metadata), y float64. */
  static const char metadata[] = {1, 0, 0, 0, 1, 0, 0, 0, 'k', 2, 0, 0, 0, 'v', 'w'};
  struct ArrowSchema fields[3] = {field("l", "x", ARROW_FLAG_NULLABLE), field("u", "name", 0), field("g", "y", 0)};
  fields[1].metadata = metadata;
  for (int i = 0; i < 3; i++) fields[i].release = noop_schema_release;
  struct ArrowSchema *field_pointers[3] = {&fields[0], &fields[1], &fields[2]};
  struct ArrowSchema input = {.format = "+s", .name = "", .n_children = 3, .children = field_pointers,
                              .release = noop_schema_release};
  struct SluiceInstanceInfo instance = {"pipeline", "node", "/tmp", 0, 1};

  struct {
    const char *options;
    int32_t status;
    const char *message;
  } bad[] = {
      {"{}", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'column' is required"},
      {"{\"column\": \"x\"}", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'factor' is required"},
      {"{\"column\": \"x\", \"factor\": 2.5}", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'factor' must be a 64-bit integer"},
      {"{\"column\": \"x\", \"factor\": 99999999999999999999}", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'factor' must be"},
      {"{\"column\": 1, \"factor\": 2}", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'column' must be a string"},
      {"{\"column\": \"x\", \"factor\": 2, \"scale\": 1}", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: unknown option 'scale'"},
      {"{\"column\": \"z\", \"factor\": 2}", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'column': the input has no column 'z'"},
      {"{\"column\": \"name\", \"factor\": 2}", SLUICE_PLUGIN_INVALID_OPTIONS,
       "c_scale: option 'column': column 'name' has format \"u\", not Int64 (\"l\")"},
      {"[1]", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: options are not a JSON object"},
      {"{\"column\": \"x\", \"factor\": 2} x", SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: options are not a JSON object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    void *state = (void *)1;
    struct ArrowSchema out_schema = {0};
    char *error = NULL;
    int32_t status = t->open(bad[i].options, &instance, &input, &state, &out_schema, &error);
    check_status(status, error, bad[i].status, bad[i].message);
    CHECK(state == NULL);
  }

  /* An escaped column name. */
  void *state = NULL;
  struct ArrowSchema out_schema = {0};
  char *error = NULL;
  int32_t status = t->open(" { \"factor\" : -3 , \"col\\u0075mn\": \"\\u0078\" } ", &instance, &input, &state, &out_schema, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  if (status != SLUICE_PLUGIN_OK) return;
  /* The output schema is a copy of the input's, owned by the host. */
  CHECK(strcmp(out_schema.format, "+s") == 0 && out_schema.n_children == 3 && out_schema.release != NULL);
  CHECK(strcmp(out_schema.children[0]->name, "x") == 0 && strcmp(out_schema.children[0]->format, "l") == 0 &&
        out_schema.children[0]->flags == ARROW_FLAG_NULLABLE);
  CHECK(strcmp(out_schema.children[1]->name, "name") == 0 && memcmp(out_schema.children[1]->metadata, metadata, sizeof metadata) == 0);
  CHECK(out_schema.children[1]->metadata != metadata);
  /* Move one child schema out, then release the parent and the child. */
  struct ArrowSchema moved_schema = *out_schema.children[2];
  out_schema.children[2]->release = NULL;
  out_schema.release(&out_schema);
  CHECK(out_schema.release == NULL && strcmp(moved_schema.name, "y") == 0);
  moved_schema.release(&moved_schema);
  CHECK(moved_schema.release == NULL);

  /* The batch: parent offset 1, length 3, over children of 5 rows.
     x: child offset 1 of [99, 1, 2, NULL, 4, 5] -> column rows 1, 2, NULL, 4, 5 -> batch rows 2, NULL, 4
     name: "a" "bb" "ccc" "dddd" "e" -> batch rows "bb" "ccc" "dddd"
     y: 0.5 1.5 2.5 3.5 4.5 -> batch rows 1.5 2.5 3.5 */
  static const int64_t x_data[] = {99, 1, 2, 0, 4, 5};
  static const uint8_t x_bits[] = {0xF7}; /* bit 3 clear */
  const void *x_buffers[2] = {x_bits, x_data};
  static const int32_t name_offsets[] = {0, 1, 3, 6, 10, 11};
  static const char name_data[] = "abbcccdddde";
  const void *name_buffers[3] = {NULL, name_offsets, name_data};
  static const double y_data[] = {0.5, 1.5, 2.5, 3.5, 4.5};
  const void *y_buffers[2] = {NULL, y_data};
  struct ArrowArray columns[3] = {primitive(5, 1, 1, x_buffers), primitive(5, 0, 0, name_buffers), primitive(5, 0, 0, y_buffers)};
  columns[1].n_buffers = 3;
  struct ArrowArray batch = make_batch(3, 1, 3, columns);

  error = NULL;
  status = t->process(state, &batch, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  CHECK(batch.release == NULL); /* moved in */
  CHECK(batch_releases == 0);   /* kept alive by the output */

  int32_t has = -1;
  struct ArrowArray out;
  error = NULL;
  status = t->next_output(state, &has, &out, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  CHECK(has == 1);
  if (has == 1) {
    CHECK(out.length == 3 && out.n_children == 3 && out.null_count == 0 && out.release != NULL);
    int64_t off = out.offset;
    const struct ArrowArray *x = out.children[0], *name = out.children[1], *y = out.children[2];
    const int64_t *xv = x->buffers[1];
    CHECK(x->length >= off + 3 && x->null_count == 1);
    CHECK(bit(x->buffers[0], x->offset + off + 0) && !bit(x->buffers[0], x->offset + off + 1) && bit(x->buffers[0], x->offset + off + 2));
    CHECK(xv[x->offset + off + 0] == -6 && xv[x->offset + off + 2] == -12);
    const int32_t *no = name->buffers[1];
    const char *nd = name->buffers[2];
    int64_t n0 = name->offset + off;
    CHECK(name->n_buffers == 3 && no[n0 + 1] - no[n0] == 2 && memcmp(nd + no[n0], "bb", 2) == 0);
    CHECK(no[n0 + 3] - no[n0 + 2] == 4 && memcmp(nd + no[n0 + 2], "dddd", 4) == 0);
    const double *yv = y->buffers[1];
    CHECK(yv[y->offset + off] == 1.5 && yv[y->offset + off + 2] == 3.5);

    /* Move the "name" child out, release the parent: the input stays alive for the child. */
    struct ArrowArray moved = *out.children[1];
    out.children[1]->release = NULL;
    out.release(&out);
    CHECK(out.release == NULL && batch_releases == 0);
    CHECK(memcmp((const char *)moved.buffers[2] + ((const int32_t *)moved.buffers[1])[moved.offset], "bb", 2) == 0);
    moved.release(&moved);
    CHECK(moved.release == NULL && batch_releases == 1);
  }
  has = -1;
  error = NULL;
  status = t->next_output(state, &has, &out, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  CHECK(has == 0);

  /* A batch of the wrong shape: an error, and the batch is released all the same. */
  struct ArrowArray two[2] = {primitive(1, 0, 0, x_buffers), primitive(1, 0, 0, y_buffers)};
  batch = make_batch(1, 0, 2, two);
  error = NULL;
  status = t->process(state, &batch, &error);
  check_status(status, error, SLUICE_PLUGIN_ERROR, "c_scale: the batch is not a struct array of 3 columns");
  CHECK(batch.release == NULL && batch_releases == 2);

  /* A batch left in the queue is released by close. */
  struct ArrowArray columns2[3] = {primitive(5, 0, 0, x_buffers), primitive(5, 0, 0, name_buffers), primitive(5, 0, 0, y_buffers)};
  columns2[1].n_buffers = 3;
  columns2[0].buffers = (const void *[2]){NULL, x_data};
  batch = make_batch(5, 0, 3, columns2);
  error = NULL;
  status = t->process(state, &batch, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  t->close(state);
  CHECK(batch_releases == 3);

  /* Overflow: a bad record, the batch released. */
  state = NULL;
  error = NULL;
  status = t->open("{\"column\": \"x\", \"factor\": 4611686018427387904}", &instance, &input, &state, &out_schema, &error);
  check_status(status, error, SLUICE_PLUGIN_OK, NULL);
  if (status != SLUICE_PLUGIN_OK) return;
  out_schema.release(&out_schema);
  struct ArrowArray columns3[3] = {primitive(5, 1, 1, x_buffers), primitive(5, 0, 0, name_buffers), primitive(5, 0, 0, y_buffers)};
  columns3[1].n_buffers = 3;
  batch = make_batch(5, 0, 3, columns3);
  error = NULL;
  status = t->process(state, &batch, &error);
  check_status(status, error, SLUICE_PLUGIN_BAD_DATA, "c_scale: 2 * 4611686018427387904 overflows Int64 (column 'x')");
  CHECK(batch_releases == 4);
  t->close(state);
}

int main(void) {
  plugin = sluice_plugin_entry();
  CHECK(plugin != NULL && plugin->abi_major == SLUICE_PLUGIN_ABI_MAJOR && plugin->abi_minor == SLUICE_PLUGIN_ABI_MINOR);
  CHECK(strcmp(plugin->name, "sluice-c-example") == 0 && plugin->n_components == 2);
  test_clamp();
  test_scale();
  printf("c-example: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
