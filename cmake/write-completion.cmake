# cmake -DREMAT=path/to/remat -DOUT=path/to/file -P write-completion.cmake
# Writes the bash completion script that 'remat completion bash' prints (built
# from the program's own command and option tables) to OUT, replacing it only
# once the program has succeeded.
execute_process(COMMAND "${REMAT}" completion bash
                OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}.tmp")
  message(FATAL_ERROR "'${REMAT} completion bash' failed (${rc})")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
