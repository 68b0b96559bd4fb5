package io.krabka.coordination.cli;

import java.util.ArrayList;
import java.util.List;

/** Left-aligned columns two spaces apart, like Kafka's own tools print them; no trailing blanks. */
final class TextTable {

    private final List<List<String>> rows = new ArrayList<>();

    TextTable(String... header) {
        if (header.length > 0) {
            rows.add(List.of(header));
        }
    }

    TextTable row(String... cells) {
        rows.add(List.of(cells));
        return this;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    String render() {
        int columns = rows.stream().mapToInt(List::size).max().orElse(0);
        int[] widths = new int[columns];
        for (List<String> row : rows) {
            for (int c = 0; c < row.size(); c++) {
                widths[c] = Math.max(
                        widths[c], row.get(c).codePointCount(0, row.get(c).length()));
            }
        }
        StringBuilder out = new StringBuilder();
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < row.size(); c++) {
                String cell = row.get(c);
                line.append(cell);
                if (c < row.size() - 1) {
                    line.append(" ".repeat(widths[c] - cell.codePointCount(0, cell.length()) + 2));
                }
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }
}
