-- attrition: one row per rejected input record (grain: record).
-- Inputs: trajectories (record-level reasons), step_rejects. Parameters: none.
-- Every input record is in exactly one of verdicts or attrition.
with record_level as (
    select record_id, trajectory_id, suite, reject_reason as reason, reject_detail as detail,
        source_file, source_line
    from trajectories
    where reject_reason is not null
),
step_level as (
    select t.record_id, t.trajectory_id, t.suite, r.reason, r.detail, t.source_file, t.source_line
    from trajectories t join step_rejects r using (trajectory_id)
    where t.reject_reason is null
),
final as (
    select trajectory_id, suite, reason, detail, source_file, source_line::bigint as source_line, record_id
    from (select * from record_level union all select * from step_level)
)
select * from final
