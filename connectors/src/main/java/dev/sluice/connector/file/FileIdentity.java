package dev.sluice.connector.file;

import dev.sluice.plugin.InvalidSettingException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * What a file source's checkpoint saw of its files, so that a resumed run, which skips what was
 * read by count, goes on only in the same files: a digest of the names and lengths of a
 * directory's files before the one being read, and that file's inode and a digest of its first
 * bytes. A file that only grew keeps both; one rewritten in place past its first 64 KiB is not
 * noticed.
 */
final class FileIdentity {

    /** How much of the file being read its digest covers (less if it was shorter then). */
    static final int HEAD_BYTES = 64 * 1024;

    private FileIdentity() {}

    /** A digest of the names and lengths of {@code files} before {@code index}, as a JSON string. */
    static String before(List<Path> files, int index) {
        MessageDigest digest = sha256();
        for (int i = 0; i < index; i++) {
            digest.update((files.get(i).getFileName() + "\u0000" + sizeOf(files.get(i)) + "\n")
                    .getBytes(StandardCharsets.UTF_8));
        }
        return "\"" + HexFormat.of().formatHex(digest.digest()) + "\"";
    }

    /**
     * The inode of {@code file} and a digest of its first {@code length} bytes (all of them, if it
     * has fewer), as a JSON string {@code "INODE LENGTH DIGEST"}.
     */
    static String head(Path file, int length) {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] first = in.readNBytes(length);
            Object inode = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
            return "\"" + inode + " " + first.length + " " + HexFormat.of().formatHex(sha256().digest(first)) + "\"";
        } catch (IOException e) {
            throw new InvalidSettingException(FileSource.PATH, "cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** How many bytes a {@link #head} covered. */
    static int headLength(String head) {
        String[] parts = head.replace("\"", "").split(" ");
        return Integer.parseInt(parts[parts.length - 2]);
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return -1;
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
