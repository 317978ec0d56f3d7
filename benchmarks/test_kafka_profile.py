"""Unit tests of kafka_profile_bench.py's reading of perf samples (run by ci/test.sh)."""
import unittest

from kafka_profile_bench import KINDS, THREADS, first, parse_sample


class ParseSampleTest(unittest.TestCase):

    def test_compiled_java_with_spaces_in_the_signature(self):
        line = ("            java 15460      7f74704d5aec int org.apache.kafka.common.utils.Utils.readFully("
                "java.io.InputStream, java.nio.ByteBuffer) (/tmp/perf-15460.map)")
        comm, pid, sym, dso = parse_sample(line)
        self.assertEqual((comm, pid, dso), ("java", "15460", "/tmp/perf-15460.map"))
        self.assertEqual(sym, "int org.apache.kafka.common.utils.Utils.readFully(java.io.InputStream, java.nio.ByteBuffer)")
        self.assertEqual(first(KINDS, dso, sym), "compiled Java: Kafka clients")
        self.assertEqual(first(THREADS, comm), "main (Sluice's lane / the loop)")

    def test_thread_name_with_a_space_and_a_native_library(self):
        comm, pid, sym, dso = parse_sample(
            " C2 CompilerThre 15471      7f748fcf112f Assembler::pxor (/usr/lib/jvm/x/lib/server/libjvm.so)")
        self.assertEqual((comm, pid, sym), ("C2 CompilerThre", "15471", "Assembler::pxor"))
        self.assertEqual(first(THREADS, comm), "JIT compilers")
        self.assertEqual(first(KINDS, dso, sym), "JVM runtime (JIT, GC, ...)")

    def test_core_and_lz4_and_kernel(self):
        core = parse_sample("java 1 7f00 sluice_core::flat_json::find_string_end (/w/libsluice_core.so)")
        self.assertEqual(first(KINDS, core[3], core[2]), "Sluice core (native: JSON decode/encode, SQL)")
        lz4 = parse_sample("sluice-kafka-si 1 7f00 [unknown] (/tmp/liblz4-java-4815177641039543146.so)")
        self.assertEqual(first(KINDS, lz4[3], lz4[2]), "lz4 (native)")
        self.assertEqual(first(THREADS, lz4[0]), "Sluice sink's sender")
        kernel = parse_sample("java 1 ffffffff8224fc27 _raw_spin_lock ([kernel.kallsyms])")
        self.assertEqual(first(KINDS, kernel[3], kernel[2]), "kernel")

    def test_lines_that_are_not_samples(self):
        self.assertIsNone(parse_sample(""))
        self.assertIsNone(parse_sample("            bash 15460 "))


if __name__ == "__main__":
    unittest.main()
