#ifndef SLUICE_PLUGIN_H
#define SLUICE_PLUGIN_H

/* The native plugin ABI of Sluice, version 1.0.

   A plugin is a shared library that exports one C symbol, `sluice_plugin_entry`, returning a
   descriptor of the components it offers: sources, transforms, sinks, scalar SQL functions
   (UDFs), preprocessors of the pipeline file and side outputs. Batches cross only through the
   Arrow C Data Interface (https://arrow.apache.org/docs/format/CDataInterface.html); nothing in
   this header is specific to Rust, C++ or the JVM, so a plugin may be written in any language
   that can export C functions. rust/plugin-sdk wraps it safely for Rust.

   Versions. SLUICE_PLUGIN_ABI_MAJOR changes when a change breaks plugins built against an
   earlier header; the host refuses to load a plugin whose major differs from its own.
   SLUICE_PLUGIN_ABI_MINOR grows when something is added: new component kinds, or new fields
   appended at the end of a struct. A host reads an appended field only when the plugin's
   `abi_minor` says it exists, and skips components of kinds it does not know.

   Status. Every call that can fail returns one of the SLUICE_PLUGIN_* status codes and takes
   `char **out_error` last. The host sets `*out_error` to NULL before the call. On any status
   other than SLUICE_PLUGIN_OK the plugin should set it to a NUL-terminated UTF-8 message it
   allocated; the host then owns the message and releases it exactly once with the
   descriptor's `free_string` (so plugin and host never mix allocators). On SLUICE_PLUGIN_OK
   the plugin leaves it NULL.

   Options. Each component is configured with the node's `options:` mapping as one JSON object
   (a NUL-terminated UTF-8 string, "{}" when the node has none), borrowed for the call: copy
   what you keep. A component may declare the options it takes (`options_schema`) so that
   `sluice plugin inspect` can list them; it still checks them itself in `open` and answers
   SLUICE_PLUGIN_INVALID_OPTIONS with a message naming the option at fault.

   Ownership of Arrow structs follows the C Data Interface: whoever receives a moved struct
   must call its `release` exactly once (possibly later, on any thread); a borrowed struct is
   valid only during the call and must be neither released nor kept. "Moved in" below means
   the callee takes ownership of the struct's contents; "out" means the callee fills a struct
   the caller provides and the caller then owns it.

   Threads. The host never calls into one component state (`void *state`) from two threads at
   once, but successive calls on one state may come from different threads. Distinct states
   may be used concurrently, so state shared between them (globals) must be thread-safe.
   A scalar UDF's `invoke` may run concurrently on several threads with the same `state`.
   Calls marked "may block" may wait on I/O; all others should return promptly.

   Lifetime. The descriptor returned by `sluice_plugin_entry` and every string, array and
   table it points to must stay valid and unchanged while the library is loaded. The host
   never unloads a library while a state it opened, or a batch the plugin produced, is alive.
   The plugin must not call back into the host: version 1 gives it no host API.

   Failure containment. A status is a contained failure: the host fails the run or
   dead-letters per the node's `on_error`, and closes the state. A crash (a segfault, an
   abort) in plugin code takes the whole process down; the host cannot contain it. */

#include <stdint.h>
#include <stddef.h>

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#endif  /* ARROW_C_DATA_INTERFACE */

#define SLUICE_PLUGIN_ABI_MAJOR 1
#define SLUICE_PLUGIN_ABI_MINOR 0

/* Status codes. */
#define SLUICE_PLUGIN_OK 0
/* The call failed; *out_error says why. For a source, transform, sink or side output the host
   fails the run or dead-letters per `on_error`; the state is closed afterwards. */
#define SLUICE_PLUGIN_ERROR 1
/* `open` rejected the options; *out_error names the option and why. Reported by `validate`. */
#define SLUICE_PLUGIN_INVALID_OPTIONS 2
/* Data this call received cannot be processed (a record that is not valid for the plugin):
   the host treats it as a bad record of the batch per the node's `on_error`. The whole batch
   goes there: output a transform queued during the call is dropped, and a sink must not have
   written any of the batch's rows (they would be both written and set aside). */
#define SLUICE_PLUGIN_BAD_DATA 3
/* The plugin's code panicked (or threw) and its SDK caught it at the ABI edge. The host
   calls nothing on that state except `close`. */
#define SLUICE_PLUGIN_PANIC 4

/* Component kinds (SluiceComponent.kind). */
#define SLUICE_COMPONENT_SOURCE 1
#define SLUICE_COMPONENT_TRANSFORM 2
#define SLUICE_COMPONENT_SINK 3
#define SLUICE_COMPONENT_SCALAR_UDF 4
#define SLUICE_COMPONENT_PREPROCESSOR 5
#define SLUICE_COMPONENT_SIDE_OUTPUT 6

/* What a source's `poll` produced (*out_result). */
#define SLUICE_POLL_BATCH 0
#define SLUICE_POLL_NONE_YET 1
#define SLUICE_POLL_FINISHED 2

/* Volatility of a scalar UDF, as SQL engines define it. */
#define SLUICE_VOLATILITY_IMMUTABLE 0
#define SLUICE_VOLATILITY_STABLE 1
#define SLUICE_VOLATILITY_VOLATILE 2

/* Which instance of a node a state serves. Every pointer is borrowed for the call. */
struct SluiceInstanceInfo {
  /* The pipeline's name. */
  const char* pipeline;
  /* The node's name in the pipeline file. */
  const char* node;
  /* The directory of the pipeline file; resolve relative paths of the options against it. */
  const char* pipeline_dir;
  /* This copy of the node (0-based) and how many copies run, one per lane. */
  int32_t lane;
  int32_t lanes;
};

/* A source of batches. Calls on one state: open, then restore (only when a previous run
   finalized a snapshot), then poll, snapshot and commit in any order, then close. */
struct SluiceSource {
  /* Prepares the source and writes the schema of every batch it will emit to *out_schema.
     It must have no effect outside the process (`sluice validate` stops here); connect
     lazily, on the first poll. May block. */
  int32_t (*open)(const char* options_json, const struct SluiceInstanceInfo* instance, void** out_state,
                  struct ArrowSchema* out_schema, char** out_error);
  /* Returns to the position of a snapshot that a previous run finalized. `data` is borrowed.
     May be NULL when the source keeps no position. */
  int32_t (*restore)(void* state, const uint8_t* data, size_t len, char** out_error);
  /* Emits at most `max_rows` rows: SLUICE_POLL_BATCH with *out_batch filled (moved out, of the
     schema from open, at least one row), SLUICE_POLL_NONE_YET when nothing arrived within
     `timeout_millis`, or SLUICE_POLL_FINISHED when bounded input is exhausted (poll is not
     called again). May block up to `timeout_millis`. */
  int32_t (*poll)(void* state, int64_t max_rows, int64_t timeout_millis, int32_t* out_result,
                  struct ArrowArray* out_batch, char** out_error);
  /* The barrier of checkpoint `epoch` follows the batches polled so far: writes the position
     after the last of them to *out_data and *out_len (allocated by the plugin, released by the
     host with `free_bytes`; NULL and 0 for no position). The host stores it in its state DB
     and hands it to `restore` after a restart. May be NULL when the source keeps no position. */
  int32_t (*snapshot)(void* state, int64_t epoch, uint8_t** out_data, size_t* out_len, char** out_error);
  /* Checkpoint `epoch` is durable in every sink: the source may acknowledge its input up to
     that snapshot (commit offsets, delete files). May block. May be NULL. */
  int32_t (*commit)(void* state, int64_t epoch, char** out_error);
  /* Frees the state. Called exactly once for every successful open, also after a failure. */
  void (*close)(void* state);
};

/* A transform of one input. Calls on one state: open, then process, next_output and barrier in
   any order, then close. After `process` and after `barrier` the host calls `next_output`
   until it reports no batch. */
struct SluiceTransform {
  /* Prepares the transform for input batches of `input_schema` (borrowed) and writes the schema
     of its output batches to *out_schema. No effect outside the process. */
  int32_t (*open)(const char* options_json, const struct SluiceInstanceInfo* instance,
                  const struct ArrowSchema* input_schema, void** out_state, struct ArrowSchema* out_schema,
                  char** out_error);
  /* Processes one input batch (moved in: the plugin releases it, possibly later). Output
     it produces is queued for `next_output`. */
  int32_t (*process)(void* state, struct ArrowArray* batch, char** out_error);
  /* Takes the next queued output batch: *out_has_batch = 1 and *out_batch filled (moved out, of
     the output schema), or *out_has_batch = 0 when the queue is empty. */
  int32_t (*next_output)(void* state, int32_t* out_has_batch, struct ArrowArray* out_batch, char** out_error);
  /* The barrier of checkpoint `epoch` follows the batches processed so far: queue anything
     held back for them (a transform keeps no state across a barrier in version 1). May be NULL. */
  int32_t (*barrier)(void* state, int64_t epoch, char** out_error);
  void (*close)(void* state);
};

/* The end of a pipeline. Calls on one state: open, then (only when the pipeline runs, never in
   `validate`) start, write, flush and commit, then close. Writes must be idempotent under
   replay: after a crash the host replays every batch since the last finalized checkpoint. */
struct SluiceSink {
  /* Prepares the sink for batches of `schema` (borrowed). It must leave the destination
     untouched (`sluice validate` stops here). */
  int32_t (*open)(const char* options_json, const struct SluiceInstanceInfo* instance,
                  const struct ArrowSchema* schema, void** out_state, char** out_error);
  /* Opens the destination (creates the file, connects). May block. May be NULL. */
  int32_t (*start)(void* state, char** out_error);
  /* Writes one batch (moved in). May buffer. May block. */
  int32_t (*write)(void* state, struct ArrowArray* batch, char** out_error);
  /* Returns only when everything written before the barrier of `epoch` is durable; returning
     SLUICE_PLUGIN_OK acknowledges the epoch. May block. */
  int32_t (*flush)(void* state, int64_t epoch, char** out_error);
  /* Checkpoint `epoch` is finalized (every sink flushed it, the host recorded it). May be NULL. */
  int32_t (*commit)(void* state, int64_t epoch, char** out_error);
  void (*close)(void* state);
};

/* A scalar SQL function, called by name from any `sql` transform. The SQL engine calls it
   directly, once per batch, inside the plan: no JVM crossing. */
struct SluiceScalarUdf {
  /* The argument types, `n_args` Arrow C format strings ("l" int64, "d" float64, "u" utf8,
     "z" binary, "b" boolean, ...). SQL arguments are cast to these types before the call. */
  int64_t n_args;
  const char** arg_types;
  /* The Arrow C format string of the result. */
  const char* return_type;
  /* SLUICE_VOLATILITY_*. */
  int32_t volatility;
  /* Passed back to invoke unchanged; the plugin's own data. */
  void* state;
  /* Computes `n_rows` results. `args` points to `n_args` borrowed arrays of the declared
     types, each of length `n_rows` (mind their `offset`); a constant argument arrives
     repeated. Writes an array of `return_type` and length `n_rows` to *out_result (moved out).
     May be called concurrently from several threads. */
  int32_t (*invoke)(void* state, struct ArrowArray** args, int64_t n_rows, struct ArrowArray* out_result,
                    char** out_error);
};

/* Rewrites the pipeline file before it is validated (templates, includes, environment). */
struct SluicePreprocessor {
  /* `yaml` is the file's text and `pipeline_path` its path, both borrowed. Writes the
     rewritten text to *out_yaml (allocated by the plugin, released with `free_string`). */
  int32_t (*rewrite)(const char* options_json, const char* pipeline_path, const char* yaml, char** out_yaml,
                     char** out_error);
};

/* Sees every batch one node emits, read-only (mirroring, auditing). It cannot change or drop
   them; its errors fail the run. */
struct SluiceSideOutput {
  /* `observed_node` names the node whose output it sees; `schema` (borrowed) is that output's. */
  int32_t (*open)(const char* options_json, const struct SluiceInstanceInfo* instance, const char* observed_node,
                  const struct ArrowSchema* schema, void** out_state, char** out_error);
  /* `batch` is borrowed and read-only: valid for the call only. May block. */
  int32_t (*observe)(void* state, const struct ArrowArray* batch, char** out_error);
  /* Everything observed before the barrier of `epoch` must be durable. May be NULL. */
  int32_t (*barrier)(void* state, int64_t epoch, char** out_error);
  void (*close)(void* state);
};

/* One component of a plugin. */
struct SluiceComponent {
  /* SLUICE_COMPONENT_*: says which struct `vtable` points to (SluiceSource, SluiceTransform,
     SluiceSink, SluiceScalarUdf, SluicePreprocessor or SluiceSideOutput). */
  int32_t kind;
  /* The name a pipeline selects it by (`component:`, or the SQL function name of a UDF:
     lowercase letters, digits and '_'); unique within its kind in one plugin. */
  const char* name;
  /* One paragraph for `sluice plugin inspect`; may be NULL. */
  const char* description;
  /* The options it takes, or NULL: a JSON array of objects {"name", "type" (string, integer,
     number, boolean, duration, list, object), "required" (boolean), "default" (any JSON
     value), "doc" (string)}. */
  const char* options_schema;
  const void* vtable;
};

/* What `sluice_plugin_entry` returns. */
struct SluicePlugin {
  /* SLUICE_PLUGIN_ABI_MAJOR and SLUICE_PLUGIN_ABI_MINOR of the header the plugin was built with. */
  int32_t abi_major;
  int32_t abi_minor;
  /* The plugin's name and version, for `sluice plugin inspect`, logs and errors. */
  const char* name;
  const char* version;
  int64_t n_components;
  const struct SluiceComponent* components;
  /* Releases a string the plugin allocated (error messages, preprocessed text). */
  void (*free_string)(char* text);
  /* Releases bytes the plugin allocated (source snapshots). */
  void (*free_bytes)(uint8_t* data, size_t len);
};

/* The plugin's one exported symbol. Called once after loading, from any thread; returns the
   plugin's static descriptor (never NULL). */
const struct SluicePlugin* sluice_plugin_entry(void);

#endif  /* SLUICE_PLUGIN_H */
