lib select tests/lib/bad_json/manifest.json --op gemm --shape M=1
