-- Fewer, wider background merges for the two high-volume tables.
--
-- Under ingest the embedded engine spent about a third of the service's CPU merging the parts
-- that group-commit inserts create (docs/bench.md: MergeMutate 0.5 of 1.6 cores). A part is
-- merged again each time it joins a merge, so how many parts a merge takes at once sets how many
-- times a row is rewritten. `merge_selector_base` (an expert setting of ClickHouse's merge
-- selector, default 5) raised to 20 lets a merge take about that many parts: measured on the
-- engine in paired runs of the same insert stream, 15-18% less CPU per stored row, merges
-- included, for a few more parts alive at a time (13 rather than 8 after 20 s of 3,000-event
-- inserts; reads merge them under FINAL). Applied as a table setting, so a server's own
-- defaults are left alone for every other table.

ALTER TABLE events MODIFY SETTING merge_selector_base = 20;

ALTER TABLE network_logs MODIFY SETTING merge_selector_base = 20
