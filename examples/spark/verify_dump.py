"""Verify gzipped JSON Lines dumps of App Store signed data on Spark with `vouch batch`.

  spark-submit --files /path/to/vouch verify_dump.py 'dumps/*.jsonl.gz' results/ [vouch options]

Each line is a JSON object with an "id" and a "signedPayload" (one token per line). Every Arrow
batch goes through one `vouch batch --jobs 1 -` (the static binary, shipped with --files);
its exit status and record count are checked, records are joined back by "id", written as
parquet, and verdicts are counted by error code. Paths in vouch options must exist on executors.
"""
import os
import subprocess
import sys

import pyarrow as pa
from pyspark import SparkFiles
from pyspark.sql import SparkSession, functions as F

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../Schemas/verification-record.ddl")
RECORD = open(SCHEMA).read().strip()
INPUT = "id STRING, signedPayload STRING"


def verify(batches, options):
    for batch in batches:
        lines = batch.column("line").to_pylist()
        command = [SparkFiles.get("vouch"), "batch", "--jobs", "1", "--no-line-number", "--no-progress",
                   "--echo", "id", "--rejections-ok", *options, "-"]
        run = subprocess.run(command, input=("\n".join(lines) + "\n").encode(), capture_output=True)
        if run.returncode != 0:  # a usage or I/O error: fail the task, Spark retries it
            raise RuntimeError(f"vouch exited {run.returncode}: {run.stderr.decode()[-2000:]}")
        records = run.stdout.decode().splitlines()
        if len(records) != len(lines):
            raise RuntimeError(f"{len(lines)} lines in, {len(records)} records out")
        yield pa.RecordBatch.from_arrays([pa.array(records, pa.string())], names=["record"])


def main(source, target, options):
    spark = SparkSession.builder.appName("vouch-verify-dump").getOrCreate()
    dumps = spark.read.schema(INPUT).json(source)
    lines = dumps.select(F.to_json(F.struct("id", "signedPayload")).alias("line"))
    records = lines.mapInArrow(lambda batches: verify(batches, options), "record STRING")
    parsed = records.select(F.from_json("record", RECORD).alias("r")).select(
        F.col("r.echo")["id"].alias("id"), "r.status", "r.kind", F.col("r.error.code").alias("code"),
        F.col("r.error.reason").alias("reason"), F.col("r.payload").alias("payload"))
    parsed.write.mode("overwrite").parquet(target)
    verdicts = spark.read.parquet(target).groupBy(F.coalesce("code", F.lit("verified")).alias("verdict")).count()
    for row in verdicts.orderBy("verdict").collect():
        print(f"{row['verdict']}\t{row['count']}")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
