{
  'targets': [
    {
      'target_name': 'squeeze_lz4',
      'sources': ['src/binding.c', 'deps/lz4/lz4.c', 'deps/lz4/lz4hc.c'],
      'include_dirs': ['deps/lz4'],
      'defines': ['NAPI_VERSION=8'],
      'cflags': ['-O3'],
      'xcode_settings': { 'OTHER_CFLAGS': ['-O3'] }
    }
  ]
}
