package dev.runner.ordering;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

class RecordOrderTest {

    private static final Pattern OPEN_LIST = Pattern.compile("status in \\(('queued', 'processing'[^)]*)\\)");

    /** The statuses that hold a record back are one list: the index's predicate and every function's check name the same. */
    @Test
    void everyOpenListOfTheRecordMigrationsIsRecordOrderOpen() throws IOException {
        List<Set<String>> lists = OPEN_LIST.matcher(migration("V66__records_index.sql") + migration("V67__records_functions.sql"))
                .results().map(m -> m.group(1)).map(RecordOrderTest::statuses).toList();
        assertFalse(lists.isEmpty());
        lists.forEach(list -> assertEquals(RecordOrder.OPEN, list));
    }

    private static Set<String> statuses(String list) {
        return Arrays.stream(list.split(",")).map(s -> s.trim().replace("'", "")).collect(Collectors.toSet());
    }

    private static String migration(String name) throws IOException {
        try (InputStream in = RecordOrderTest.class.getResourceAsStream("/db/migration/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
