# ARG --arl-blocking-calls=mylib.fetch_*->mylib.afetch
import mylib


async def run_tool():
    mylib.fetch_page("u")  # ARL190: mylib.fetch_page, ; use mylib.afetch
    await mylib.afetch("u")
