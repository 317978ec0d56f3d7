/* A Sluice native plugin in plain C11 (libc only): the scalar UDF `c_clamp` and the transform
   `c_scale`. It shows the ABI of plugins-api/include/sluice_plugin.h without any SDK:
   status codes, malloc'd error strings freed with the descriptor's free_string, and the
   ownership rules of the Arrow C Data Interface.

   Build: cc -std=c11 -Wall -Wextra -Werror -O2 -shared -fPIC -o libsluice_c_example.so sluice_c_example.c */

#include "../../../plugins-api/include/sluice_plugin.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------ */

/* Sets *out_error to a malloc'd message (when out_error is not NULL) and returns status. */
static int32_t fail(char **out_error, int32_t status, const char *format, ...) {
  if (out_error != NULL) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    char *message = n < 0 ? NULL : malloc((size_t)n + 1);
    if (message != NULL) {
      va_start(args, format);
      vsnprintf(message, (size_t)n + 1, format, args);
      va_end(args);
    }
    *out_error = message; /* NULL only when out of memory: the host copes with a missing message */
  }
  return status;
}

/* 64-byte aligned memory (as Arrow recommends), at least one block so it is never NULL. */
static void *alloc_buffer(size_t size) {
  size_t rounded = size == 0 ? 64 : (size + 63) / 64 * 64;
  return aligned_alloc(64, rounded);
}

static bool bit_get(const uint8_t *bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

static void bit_set(uint8_t *bits, int64_t i, bool value) {
  if (value) {
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  } else {
    bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
  }
}

/* Whether row i (logical, before the array's offset) of a primitive array is valid. */
static bool is_valid(const struct ArrowArray *array, int64_t i) {
  const uint8_t *validity = array->buffers[0];
  return validity == NULL || array->null_count == 0 || bit_get(validity, array->offset + i);
}

/* Checks what every primitive array from the host must have: 2 buffers (validity, values)
   and at least `rows` rows. */
static bool check_primitive(const struct ArrowArray *array, int64_t rows) {
  return array != NULL && array->release != NULL && array->n_buffers == 2 && array->buffers != NULL && array->length >= rows &&
         array->offset >= 0 && array->n_children == 0 && (array->buffers[1] != NULL || array->length == 0);
}

/* A primitive array of `length` values that owns its two buffers (validity may be NULL). */
struct PrimitiveOut {
  const void *buffers[2];
};

static void primitive_release(struct ArrowArray *array) {
  struct PrimitiveOut *out = array->private_data;
  free((void *)out->buffers[0]);
  free((void *)out->buffers[1]);
  free(out);
  array->release = NULL;
}

/* ---- c_clamp(value, lo, hi) ----------------------------------------------------------------- */

static const char *clamp_arg_types[3] = {"g", "g", "g"};

static int32_t clamp_invoke(void *state, struct ArrowArray **args, int64_t n_rows, struct ArrowArray *out_result,
                            char **out_error) {
  (void)state;
  if (args == NULL || out_result == NULL || n_rows < 0) {
    return fail(out_error, SLUICE_PLUGIN_ERROR, "c_clamp: invalid call (args %p, n_rows %lld)", (void *)args, (long long)n_rows);
  }
  for (int a = 0; a < 3; a++) {
    if (!check_primitive(args[a], n_rows)) {
      return fail(out_error, SLUICE_PLUGIN_ERROR, "c_clamp: argument %d is not a float64 array of %lld rows", a + 1,
                  (long long)n_rows);
    }
  }
  const struct ArrowArray *value = args[0], *lo = args[1], *hi = args[2];
  const double *v = value->buffers[1], *l = lo->buffers[1], *h = hi->buffers[1];

  struct PrimitiveOut *out = malloc(sizeof *out);
  double *values = alloc_buffer((size_t)n_rows * sizeof(double));
  uint8_t *validity = alloc_buffer(((size_t)n_rows + 7) / 8);
  if (out == NULL || values == NULL || validity == NULL) {
    free(out);
    free(values);
    free(validity);
    return fail(out_error, SLUICE_PLUGIN_ERROR, "c_clamp: out of memory");
  }
  memset(validity, 0, ((size_t)n_rows + 7) / 8);
  int64_t nulls = 0;
  for (int64_t i = 0; i < n_rows; i++) {
    if (!is_valid(value, i) || !is_valid(lo, i) || !is_valid(hi, i)) {
      values[i] = 0.0;
      nulls++;
      continue;
    }
    /* Row i of an array is its value at offset + i. */
    double x = v[value->offset + i], low = l[lo->offset + i], high = h[hi->offset + i];
    if (low > high) {
      free(out);
      free(values);
      free(validity);
      return fail(out_error, SLUICE_PLUGIN_BAD_DATA, "c_clamp: lo %g is greater than hi %g", low, high);
    }
    values[i] = x < low ? low : x > high ? high : x; /* NaN stays NaN */
    bit_set(validity, i, true);
  }
  if (nulls == 0) {
    free(validity);
    validity = NULL;
  }
  out->buffers[0] = validity;
  out->buffers[1] = values;
  *out_result = (struct ArrowArray){
      .length = n_rows,
      .null_count = nulls,
      .offset = 0,
      .n_buffers = 2,
      .n_children = 0,
      .buffers = out->buffers,
      .children = NULL,
      .dictionary = NULL,
      .release = primitive_release,
      .private_data = out,
  };
  return SLUICE_PLUGIN_OK;
}

static const struct SluiceScalarUdf clamp_udf = {
    .n_args = 3,
    .arg_types = clamp_arg_types,
    .return_type = "g",
    .volatility = SLUICE_VOLATILITY_IMMUTABLE,
    .state = NULL,
    .invoke = clamp_invoke,
};

/* ---- the options of c_scale: {"column": "<name>", "factor": <integer>} ---------------------- */

struct Parser {
  const char *p;
};

static void skip_ws(struct Parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool read_hex4(const char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(p[i]);
    if (d < 0) return false;
    v = v << 4 | (unsigned)d;
  }
  *out = v;
  return true;
}

/* Parses a JSON string at ps->p into a malloc'd UTF-8 string; NULL on a syntax error. */
static char *parse_string(struct Parser *ps) {
  if (*ps->p != '"') return NULL;
  ps->p++;
  size_t cap = strlen(ps->p) + 1, len = 0; /* a decoded string is never longer than its JSON */
  char *out = malloc(cap);
  if (out == NULL) return NULL;
  for (;;) {
    unsigned char c = (unsigned char)*ps->p++;
    if (c == '"') break;
    if (c == '\0' || c < 0x20) {
      free(out);
      return NULL;
    }
    if (c != '\\') {
      out[len++] = (char)c;
      continue;
    }
    char e = *ps->p++;
    switch (e) {
      case '"': out[len++] = '"'; break;
      case '\\': out[len++] = '\\'; break;
      case '/': out[len++] = '/'; break;
      case 'b': out[len++] = '\b'; break;
      case 'f': out[len++] = '\f'; break;
      case 'n': out[len++] = '\n'; break;
      case 'r': out[len++] = '\r'; break;
      case 't': out[len++] = '\t'; break;
      case 'u': {
        unsigned cp;
        if (!read_hex4(ps->p, &cp)) {
          free(out);
          return NULL;
        }
        ps->p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair */
          unsigned low;
          if (ps->p[0] != '\\' || ps->p[1] != 'u' || !read_hex4(ps->p + 2, &low) || low < 0xDC00 || low > 0xDFFF) {
            free(out);
            return NULL;
          }
          ps->p += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          free(out);
          return NULL;
        }
        if (cp == 0) { /* a NUL cannot be part of a C string */
          free(out);
          return NULL;
        }
        /* \uXXXX is 6 bytes of JSON (a pair 12) and at most 3 (a pair 4) of UTF-8: it fits. */
        if (cp < 0x80) {
          out[len++] = (char)cp;
        } else if (cp < 0x800) {
          out[len++] = (char)(0xC0 | cp >> 6);
          out[len++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          out[len++] = (char)(0xE0 | cp >> 12);
          out[len++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          out[len++] = (char)(0x80 | (cp & 0x3F));
        } else {
          out[len++] = (char)(0xF0 | cp >> 18);
          out[len++] = (char)(0x80 | ((cp >> 12) & 0x3F));
          out[len++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          out[len++] = (char)(0x80 | (cp & 0x3F));
        }
        break;
      }
      default:
        free(out);
        return NULL;
    }
  }
  out[len] = '\0';
  return out;
}

/* Parses a JSON integer (no fraction, no exponent) that fits int64. */
static bool parse_integer(struct Parser *ps, int64_t *out) {
  const char *p = ps->p;
  bool negative = *p == '-';
  if (negative) p++;
  if (*p < '0' || *p > '9') return false;
  if (*p == '0' && p[1] >= '0' && p[1] <= '9') return false; /* no leading zeros in JSON */
  uint64_t magnitude = 0, limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (magnitude > (limit - d) / 10) return false;
    magnitude = magnitude * 10 + d;
  }
  if (*p == '.' || *p == 'e' || *p == 'E') return false;
  *out = negative ? (magnitude == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)magnitude) : (int64_t)magnitude;
  ps->p = p;
  return true;
}

struct ScaleOptions {
  char *column; /* malloc'd */
  int64_t factor;
};

static int32_t parse_scale_options(const char *json, struct ScaleOptions *options, char **out_error) {
  struct Parser ps = {json == NULL ? "{}" : json};
  bool has_factor = false;
  options->column = NULL;
  options->factor = 0;
  skip_ws(&ps);
  if (*ps.p != '{') goto syntax;
  ps.p++;
  skip_ws(&ps);
  if (*ps.p == '}') {
    ps.p++;
  } else {
    for (;;) {
      skip_ws(&ps);
      char *key = parse_string(&ps);
      if (key == NULL) goto syntax;
      skip_ws(&ps);
      if (*ps.p != ':') {
        free(key);
        goto syntax;
      }
      ps.p++;
      skip_ws(&ps);
      if (strcmp(key, "column") == 0) {
        free(key);
        char *column = parse_string(&ps);
        if (column == NULL) {
          free(options->column);
          return fail(out_error, SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'column' must be a string");
        }
        free(options->column);
        options->column = column;
      } else if (strcmp(key, "factor") == 0) {
        free(key);
        if (!parse_integer(&ps, &options->factor)) {
          free(options->column);
          return fail(out_error, SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'factor' must be a 64-bit integer");
        }
        has_factor = true;
      } else {
        int32_t status =
            fail(out_error, SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: unknown option '%s' (options: column, factor)", key);
        free(key);
        free(options->column);
        return status;
      }
      skip_ws(&ps);
      if (*ps.p == ',') {
        ps.p++;
        continue;
      }
      if (*ps.p == '}') {
        ps.p++;
        break;
      }
      goto syntax;
    }
  }
  skip_ws(&ps);
  if (*ps.p != '\0') goto syntax;
  if (options->column == NULL) {
    return fail(out_error, SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'column' is required");
  }
  if (!has_factor) {
    free(options->column);
    return fail(out_error, SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'factor' is required");
  }
  return SLUICE_PLUGIN_OK;
syntax:
  free(options->column);
  return fail(out_error, SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: options are not a JSON object of the form "
                                                        "{\"column\": \"<name>\", \"factor\": <integer>}");
}

/* ---- schemas -------------------------------------------------------------------------------- */

static void schema_release(struct ArrowSchema *schema) {
  free((void *)schema->format);
  free((void *)schema->name);
  free((void *)schema->metadata);
  for (int64_t i = 0; i < schema->n_children; i++) {
    struct ArrowSchema *child = schema->children[i];
    if (child->release != NULL) child->release(child); /* NULL: the consumer moved it out */
    free(child);
  }
  free(schema->children);
  if (schema->dictionary != NULL) {
    if (schema->dictionary->release != NULL) schema->dictionary->release(schema->dictionary);
    free(schema->dictionary);
  }
  schema->release = NULL;
}

static char *copy_cstr(const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (copy != NULL) memcpy(copy, s, n);
  return copy;
}

/* The size of C Data Interface metadata: int32 count, then int32 length + bytes for each key
   and each value. */
static size_t metadata_size(const char *metadata) {
  if (metadata == NULL) return 0;
  int32_t n, len;
  size_t size = sizeof n;
  memcpy(&n, metadata, sizeof n);
  for (int32_t i = 0; i < 2 * n; i++) {
    memcpy(&len, metadata + size, sizeof len);
    size += sizeof len + (size_t)len;
  }
  return size;
}

/* A deep copy of `src` into `dst`, owned by the receiver (released with schema_release).
   Returns false when out of memory, with dst left released. */
static bool schema_copy(struct ArrowSchema *dst, const struct ArrowSchema *src, int depth) {
  *dst = (struct ArrowSchema){.flags = src->flags, .release = schema_release};
  if (depth > 64 || src->n_children < 0) {
    schema_release(dst);
    return false;
  }
  size_t meta = metadata_size(src->metadata);
  dst->format = copy_cstr(src->format);
  dst->name = copy_cstr(src->name);
  if (meta > 0) {
    char *copy = malloc(meta);
    if (copy != NULL) memcpy(copy, src->metadata, meta);
    dst->metadata = copy;
  }
  bool ok = dst->format != NULL && (src->name == NULL || dst->name != NULL) && (meta == 0 || dst->metadata != NULL);
  if (ok && src->n_children > 0) {
    dst->children = calloc((size_t)src->n_children, sizeof *dst->children);
    ok = dst->children != NULL;
    for (int64_t i = 0; ok && i < src->n_children; i++) {
      struct ArrowSchema *child = malloc(sizeof *child);
      if (child == NULL) {
        ok = false;
        break;
      }
      ok = schema_copy(child, src->children[i], depth + 1);
      dst->children[i] = child;
      dst->n_children = i + 1; /* so that schema_release frees what exists */
    }
  }
  if (ok && src->dictionary != NULL) {
    dst->dictionary = malloc(sizeof *dst->dictionary);
    ok = dst->dictionary != NULL && schema_copy(dst->dictionary, src->dictionary, depth + 1);
  }
  if (!ok) {
    schema_release(dst);
    return false;
  }
  return true;
}

/* ---- c_scale -------------------------------------------------------------------------------- */

/* An output batch: it holds the moved-in input batch, whose children (but the scaled one) it
   passes through. The parent and each child hold one reference; the input is released when
   the last of them is, so the consumer may move children out and release them at any time,
   on any thread. */
struct ScaleBatch {
  atomic_long refs;
  struct ArrowArray input;
  const void *parent_buffers[1];
  struct ArrowArray **child_pointers;
  struct ArrowArray *children;
  const void **child_buffers; /* 2 per child: the scaled child's own; others point to the input's */
  void *scaled_validity;
  void *scaled_values;
};

static void scale_batch_free(struct ScaleBatch *batch) {
  if (batch->input.release != NULL) batch->input.release(&batch->input);
  free((void *)batch->parent_buffers[0]);
  free(batch->child_pointers);
  free(batch->children);
  free(batch->child_buffers);
  free(batch->scaled_validity);
  free(batch->scaled_values);
  free(batch);
}

static void scale_batch_unref(struct ScaleBatch *batch) {
  if (atomic_fetch_sub(&batch->refs, 1) == 1) scale_batch_free(batch);
}

static void scale_child_release(struct ArrowArray *child) {
  struct ScaleBatch *batch = child->private_data;
  child->release = NULL;
  scale_batch_unref(batch);
}

static void scale_parent_release(struct ArrowArray *parent) {
  struct ScaleBatch *batch = parent->private_data;
  for (int64_t i = 0; i < parent->n_children; i++) {
    struct ArrowArray *child = parent->children[i];
    if (child->release != NULL) child->release(child); /* NULL: the consumer moved it out */
  }
  parent->release = NULL;
  scale_batch_unref(batch);
}

/* The queue of output batches (a transform of one input emits one batch per input). */
struct QueueItem {
  struct ArrowArray batch;
  struct QueueItem *next;
};

struct ScaleState {
  int64_t column;    /* index of the scaled column */
  int64_t n_columns; /* of the input schema */
  int64_t factor;
  char *column_name;
  struct QueueItem *head, *tail;
};

static int32_t scale_open(const char *options_json, const struct SluiceInstanceInfo *instance,
                          const struct ArrowSchema *input_schema, void **out_state, struct ArrowSchema *out_schema,
                          char **out_error) {
  (void)instance;
  if (out_state == NULL || out_schema == NULL || input_schema == NULL || input_schema->release == NULL) {
    return fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: invalid call to open");
  }
  *out_state = NULL;
  struct ScaleOptions options = {NULL, 0};
  int32_t status = parse_scale_options(options_json, &options, out_error);
  if (status != SLUICE_PLUGIN_OK) return status;
  if (input_schema->format == NULL || strcmp(input_schema->format, "+s") != 0 || input_schema->n_children < 0) {
    free(options.column);
    return fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: the input schema is not a struct (\"+s\")");
  }
  for (int64_t i = 0; i < input_schema->n_children; i++) {
    if (input_schema->children == NULL || input_schema->children[i] == NULL) {
      free(options.column);
      return fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: the input schema has a NULL child");
    }
  }
  int64_t column = -1;
  for (int64_t i = 0; i < input_schema->n_children; i++) {
    const struct ArrowSchema *child = input_schema->children[i];
    if (child->name != NULL && strcmp(child->name, options.column) == 0) {
      column = i;
      break;
    }
  }
  if (column < 0) {
    status = fail(out_error, SLUICE_PLUGIN_INVALID_OPTIONS, "c_scale: option 'column': the input has no column '%s'",
                  options.column);
    free(options.column);
    return status;
  }
  const char *format = input_schema->children[column]->format;
  if (format == NULL || strcmp(format, "l") != 0) {
    status = fail(out_error, SLUICE_PLUGIN_INVALID_OPTIONS,
                  "c_scale: option 'column': column '%s' has format \"%s\", not Int64 (\"l\")", options.column,
                  format == NULL ? "" : format);
    free(options.column);
    return status;
  }
  struct ScaleState *state = calloc(1, sizeof *state);
  if (state == NULL || !schema_copy(out_schema, input_schema, 0)) {
    free(state);
    free(options.column);
    return fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: out of memory");
  }
  state->column = column;
  state->n_columns = input_schema->n_children;
  state->factor = options.factor;
  state->column_name = options.column;
  *out_state = state;
  return SLUICE_PLUGIN_OK;
}

/* a * b into *out, or false when it overflows int64. */
static bool checked_mul(int64_t a, int64_t b, int64_t *out) {
  if (a > 0) {
    if (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a) return false;
  } else if (a < 0) {
    if (b > 0 ? a < INT64_MIN / b : b < 0 && a < INT64_MAX / b) return false;
  }
  *out = a * b;
  return true;
}

static int32_t scale_process(void *state_ptr, struct ArrowArray *batch, char **out_error) {
  struct ScaleState *state = state_ptr;
  if (batch == NULL || batch->release == NULL) {
    return fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: process without a batch");
  }
  /* Move the batch in: from here on it is ours to release, whatever happens. */
  struct ScaleBatch *out = calloc(1, sizeof *out);
  if (out == NULL) {
    batch->release(batch);
    return fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: out of memory");
  }
  out->input = *batch;
  batch->release = NULL;
  atomic_init(&out->refs, 1);
  const struct ArrowArray *in = &out->input;
  int32_t status = SLUICE_PLUGIN_OK;
  if (state == NULL) {
    status = fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: process without a state");
    goto error;
  }

  /* Check what the batch must be: a struct array of the input schema's columns. */
  int64_t rows = in->length, offset = in->offset, n = in->n_children;
  if (rows < 0 || offset < 0 || n != state->n_columns || in->n_buffers != 1 || in->buffers == NULL ||
      (n > 0 && in->children == NULL)) {
    status = fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: the batch is not a struct array of %lld columns",
                  (long long)state->n_columns);
    goto error;
  }
  for (int64_t i = 0; i < n; i++) {
    const struct ArrowArray *child = in->children[i];
    if (child == NULL || child->release == NULL || child->length < offset + rows || child->offset < 0) {
      status = fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: column %lld of the batch is shorter than the batch", (long long)i);
      goto error;
    }
  }
  const struct ArrowArray *scaled_in = in->children[state->column];
  if (!check_primitive(scaled_in, offset + rows)) {
    status = fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: column '%s' of the batch is not an Int64 array", state->column_name);
    goto error;
  }

  /* The output's parent: offset 0, so the parent's validity (if any) is copied shifted. */
  const uint8_t *parent_validity = in->buffers[0];
  int64_t parent_nulls = 0;
  if (parent_validity != NULL && in->null_count != 0) {
    uint8_t *bits = alloc_buffer(((size_t)rows + 7) / 8);
    if (bits == NULL) goto oom;
    memset(bits, 0, ((size_t)rows + 7) / 8);
    for (int64_t r = 0; r < rows; r++) {
      bool valid = bit_get(parent_validity, offset + r);
      bit_set(bits, r, valid);
      parent_nulls += !valid;
    }
    out->parent_buffers[0] = bits;
  }

  out->child_pointers = calloc(n > 0 ? (size_t)n : 1, sizeof *out->child_pointers);
  out->children = calloc(n > 0 ? (size_t)n : 1, sizeof *out->children);
  out->child_buffers = calloc(2 * (n > 0 ? (size_t)n : 1), sizeof *out->child_buffers);
  if (out->child_pointers == NULL || out->children == NULL || out->child_buffers == NULL) goto oom;

  /* The scaled column: new buffers of `rows` values at offset 0. The row r of the batch is
     the row offset + r of the column (the parent's offset applies to its children). */
  int64_t base = scaled_in->offset + offset;
  const int64_t *values_in = scaled_in->buffers[1];
  const uint8_t *validity_in = scaled_in->null_count == 0 ? NULL : scaled_in->buffers[0];
  int64_t *values = alloc_buffer((size_t)rows * sizeof(int64_t));
  uint8_t *validity = validity_in == NULL ? NULL : alloc_buffer(((size_t)rows + 7) / 8);
  out->scaled_values = values;
  out->scaled_validity = validity;
  if (values == NULL || (validity_in != NULL && validity == NULL)) goto oom;
  if (validity != NULL) memset(validity, 0, ((size_t)rows + 7) / 8);
  int64_t scaled_nulls = 0;
  for (int64_t r = 0; r < rows; r++) {
    if (validity_in != NULL && !bit_get(validity_in, base + r)) {
      values[r] = 0;
      scaled_nulls++;
      continue;
    }
    if (validity != NULL) bit_set(validity, r, true);
    if (!checked_mul(values_in[base + r], state->factor, &values[r])) {
      status = fail(out_error, SLUICE_PLUGIN_BAD_DATA, "c_scale: %lld * %lld overflows Int64 (column '%s')",
                    (long long)values_in[base + r], (long long)state->factor, state->column_name);
      goto error;
    }
  }

  for (int64_t i = 0; i < n; i++) {
    const struct ArrowArray *src = in->children[i];
    struct ArrowArray *dst = &out->children[i];
    if (i == state->column) {
      out->child_buffers[2 * i] = validity;
      out->child_buffers[2 * i + 1] = values;
      *dst = (struct ArrowArray){.length = rows,
                                 .null_count = scaled_nulls,
                                 .offset = 0,
                                 .n_buffers = 2,
                                 .n_children = 0,
                                 .buffers = &out->child_buffers[2 * i]};
    } else {
      /* Passed through: the input's buffers and grandchildren, the row range of the batch. */
      *dst = *src;
      dst->offset = src->offset + offset;
      dst->length = rows;
      dst->null_count = src->null_count == 0 ? 0 : -1;
    }
    dst->release = scale_child_release;
    dst->private_data = out;
    out->child_pointers[i] = dst;
  }

  struct QueueItem *item = malloc(sizeof *item);
  if (item == NULL) goto oom;
  atomic_store(&out->refs, 1 + n);
  item->batch = (struct ArrowArray){
      .length = rows,
      .null_count = parent_nulls,
      .offset = 0,
      .n_buffers = 1,
      .n_children = n,
      .buffers = out->parent_buffers,
      .children = out->child_pointers,
      .dictionary = NULL,
      .release = scale_parent_release,
      .private_data = out,
  };
  item->next = NULL;
  if (state->tail != NULL) {
    state->tail->next = item;
  } else {
    state->head = item;
  }
  state->tail = item;
  return SLUICE_PLUGIN_OK;

oom:
  status = fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: out of memory");
error:
  scale_batch_free(out); /* releases the input */
  return status;
}

static int32_t scale_next_output(void *state_ptr, int32_t *out_has_batch, struct ArrowArray *out_batch, char **out_error) {
  struct ScaleState *state = state_ptr;
  if (state == NULL || out_has_batch == NULL || out_batch == NULL) {
    return fail(out_error, SLUICE_PLUGIN_ERROR, "c_scale: invalid call to next_output");
  }
  struct QueueItem *item = state->head;
  if (item == NULL) {
    *out_has_batch = 0;
    return SLUICE_PLUGIN_OK;
  }
  state->head = item->next;
  if (state->head == NULL) state->tail = NULL;
  *out_batch = item->batch; /* moved out: the host releases it */
  free(item);
  *out_has_batch = 1;
  return SLUICE_PLUGIN_OK;
}

static void scale_close(void *state_ptr) {
  struct ScaleState *state = state_ptr;
  if (state == NULL) return;
  while (state->head != NULL) {
    struct QueueItem *item = state->head;
    state->head = item->next;
    item->batch.release(&item->batch);
    free(item);
  }
  free(state->column_name);
  free(state);
}

static const struct SluiceTransform scale_transform = {
    .open = scale_open,
    .process = scale_process,
    .next_output = scale_next_output,
    .barrier = NULL, /* holds nothing back */
    .close = scale_close,
};

/* ---- the descriptor ------------------------------------------------------------------------- */

static const struct SluiceComponent components[] = {
    {
        .kind = SLUICE_COMPONENT_SCALAR_UDF,
        .name = "c_clamp",
        .description = "c_clamp(value, lo, hi) -> value limited to [lo, hi] (float64); NULL when any argument is NULL; "
                       "lo > hi is a bad record.",
        .options_schema = NULL,
        .vtable = &clamp_udf,
    },
    {
        .kind = SLUICE_COMPONENT_TRANSFORM,
        .name = "c_scale",
        .description = "Multiplies the Int64 column `column` by the integer `factor`; other columns pass through. "
                       "An overflow is a bad record.",
        .options_schema = "[{\"name\": \"column\", \"type\": \"string\", \"required\": true, \"doc\": \"An Int64 column "
                          "of the input.\"}, {\"name\": \"factor\", \"type\": \"integer\", \"required\": true, \"doc\": "
                          "\"The multiplier.\"}]",
        .vtable = &scale_transform,
    },
};

static void free_string(char *text) { free(text); }

static void free_bytes(uint8_t *data, size_t len) {
  (void)len;
  free(data);
}

static const struct SluicePlugin plugin = {
    .abi_major = SLUICE_PLUGIN_ABI_MAJOR,
    .abi_minor = SLUICE_PLUGIN_ABI_MINOR,
    .name = "sluice-c-example",
    .version = "0.1.0",
    .n_components = sizeof components / sizeof components[0],
    .components = components,
    .free_string = free_string,
    .free_bytes = free_bytes,
};

const struct SluicePlugin *sluice_plugin_entry(void) { return &plugin; }
